import { timingSafeEqual } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { RequestLog, type LoggedRequest } from '../redfish/request-log.js';
import { ActionStore } from './actions.js';
import type { SwitchFaults } from './faults.js';
import { hostKeyFor, type HostKey } from './host-key.js';
import { applyChanges, defaultConfig, missingCertificates, type NvosConfig } from './nvos-config.js';
import { RevisionStore, settle, type Revision } from './revisions.js';
import { VirtualFs } from './vfs.js';

export const firmwareComponents = ['bmc', 'erot', 'fpga', 'cpld1', 'bios'] as const;
export type FirmwareComponent = (typeof firmwareComponents)[number];

export interface SwitchSpec {
  id: string;
  /** Loopback address both NVUE and SSH listen on. */
  address: string;
  /** 0 picks a free port (tests); the port is kept across simulated reboots. */
  nvuePort: number;
  sshPort: number;
  username: string;
  password: string;
  /** NVOS build id installed on partition 1 at start, e.g. 25.02.4282. */
  nvosVersion: string;
  /**
   * Shape of `GET /nvue_v1/system/image`: `object` (newer NVOS: `partitionN: {"build-id"}`, current/next
   * name partitions, `issu-status`) or `string` (older NVOS: build ids throughout). Default `object`.
   */
  imageShape?: 'string' | 'object';
  /** Seed of the deterministic Ed25519 host key; the id when absent. */
  hostKeySeed?: string;
  /** Make a new SSH host key on every factory reset, as an NVOS reinstall or reset may. */
  newHostKeyOnFactoryReset?: boolean;
  /**
   * How an image install hands over to the reboot: `action_error` at 100% (what NVOS does, default) or
   * `action_success`.
   */
  installEndState?: 'action_error' | 'action_success';
  /** Serve NVUE over HTTPS with this identity (PEM) instead of HTTP. */
  tls?: { certPem: string; keyPem: string };
  /** OpenSSH public key lines accepted for any configured user. */
  authorizedKeys?: string[];
  /** Platform firmware versions at start. */
  firmware?: Partial<Record<FirmwareComponent, string>>;
}

/** Simulated durations in seconds, before timeScale. */
export interface NvosTimings {
  /** A revision apply. */
  applyS: number;
  /** Short actions: uninstall, certificate import. */
  actionS: number;
  /** An NVOS image install up to the reboot handoff. */
  installS: number;
  /** A platform firmware component install. */
  firmwareInstallS: number;
  /** How long a finished install or power-cycle action stays readable before the switch goes down. */
  handoffS: number;
  /**
   * NVOS boot: NVUE and SSH refuse connections meanwhile (about two minutes,
   * docs/reference/rms-behaviours.md#switch-reboots).
   */
  rebootS: number;
}

export const defaultNvosTimings: NvosTimings = {
  applyS: 2,
  actionS: 2,
  installS: 300,
  firmwareInstallS: 120,
  handoffS: 5,
  rebootS: 120,
};

const defaultFirmware: Record<FirmwareComponent, string> = {
  bmc: '88.0002.1300',
  erot: '1.4.8',
  fpga: '0.26.0',
  cpld1: '0.2.1',
  bios: '2.13.0',
};

export interface SshLogged {
  at: string;
  /** auth, exec, or the SFTP request (open, close, stat, opendir, mkdir, remove). */
  op: string;
  user?: string;
  path?: string;
  /** Bytes received by an SFTP upload, logged when the file is closed. */
  bytes?: number;
  ok: boolean;
  detail?: string;
}

export interface InstalledCertificate {
  certPem: string;
  keyPem: string;
  validTo: string;
}

export interface InstalledCa {
  pem: string;
  validTo: string;
}

export type Partition = 1 | 2;

export interface FirmwareState {
  actual: string;
  installed: string;
}

const NO_FAULTS: SwitchFaults = Object.freeze({});
const LOG_CAPACITY = 1000;
const NO_CONFIG_DIFF = 'config apply executed with no config diff';

const equal = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/**
 * One simulated NVLink switch running NVOS: the state NVUE and SSH/SFTP share (users,
 * configuration revisions, actions, image partitions, platform firmware, certificates, the
 * filesystem), reboots, faults and what tests assert on (request logs and counters).
 */
export class SimulatedSwitch {
  readonly fs = new VirtualFs();
  hostKey: HostKey;
  readonly revisions = new RevisionStore();
  readonly actions = new ActionStore();
  readonly certificates = new Map<string, InstalledCertificate>();
  readonly caCertificates = new Map<string, InstalledCa>();
  /** The running configuration; `saved` is what a reboot comes back with. */
  config: NvosConfig;
  private saved: NvosConfig;
  readonly image: { partitions: Partial<Record<Partition, string>>; current: Partition; next: Partition };
  /** Per component: the version running (`actual`) and the one an install left for the next power cycle. */
  readonly firmware: Record<FirmwareComponent, FirmwareState>;
  faults: SwitchFaults = NO_FAULTS;
  rebooting = false;
  bootedAt = Date.now();
  readonly counters = {
    reboots: 0,
    installsStarted: 0,
    firmwareInstallsStarted: 0,
    passwordChanges: 0,
    factoryResets: 0,
    saves: 0,
  };
  /** NVUE requests being served now, and the most at once: the client must send one at a time. */
  inFlight = 0;
  peakConcurrentRequests = 0;
  /** Told whenever availability, configuration or faults change (listeners, TLS context, held requests follow). */
  onChange: (() => void) | undefined;
  private readonly nvueLog = new RequestLog(LOG_CAPACITY);
  private sshLog: SshLogged[] = [];
  private bootTimer: NodeJS.Timeout | undefined;
  private handoffTimer: NodeJS.Timeout | undefined;
  private readonly faultWaiters = new Set<() => void>();

  constructor(
    readonly spec: SwitchSpec,
    readonly timings: NvosTimings,
    readonly timeScale: number,
  ) {
    this.hostKey = hostKeyFor(spec.hostKeySeed ?? spec.id);
    this.config = defaultConfig(spec.username, spec.password);
    this.saved = structuredClone(this.config);
    this.fs.addHome(spec.username);
    this.image = { partitions: { 1: spec.nvosVersion }, current: 1, next: 1 };
    this.firmware = Object.fromEntries(
      firmwareComponents.map((c) => {
        const v = spec.firmware?.[c] ?? defaultFirmware[c];
        return [c, { actual: v, installed: v }];
      }),
    ) as Record<FirmwareComponent, FirmwareState>;
  }

  /** Scales a simulated duration in seconds to timer milliseconds. */
  ms(seconds: number): number {
    return seconds * 1000 * this.timeScale;
  }

  get nvueUp(): boolean {
    return !this.rebooting && !this.faults.nvueUnavailable;
  }

  get sshUp(): boolean {
    return !this.rebooting;
  }

  get currentBuild(): string | undefined {
    return this.image.partitions[this.image.current];
  }

  checkPassword(user: string, password: string): boolean {
    const u = this.config.users[user];
    // Compare against something even for an unknown user, so both cost the same.
    return equal(password, u?.password ?? '\0') && u !== undefined;
  }

  // ---- logs ---------------------------------------------------------------------------------

  record(entry: LoggedRequest): void {
    this.nvueLog.push(entry);
  }

  recordSsh(entry: Omit<SshLogged, 'at'>): void {
    this.sshLog.push({ at: new Date().toISOString(), ...entry });
    if (this.sshLog.length > LOG_CAPACITY) this.sshLog.shift();
  }

  get nvueRequests(): LoggedRequest[] {
    return this.nvueLog.toArray();
  }

  get sshRequests(): SshLogged[] {
    return [...this.sshLog];
  }

  clearNvueLog(): void {
    this.nvueLog.clear();
  }

  clearSshLog(): void {
    this.sshLog = [];
  }

  // ---- configuration --------------------------------------------------------------------------

  /** Starts applying a pending revision; it settles after applyS. Applying twice is a no-op. */
  applyRevision(r: Revision): void {
    if (r.state !== 'pending') return;
    r.state = 'applying';
    r.timer = setTimeout(() => this.finishApply(r), this.ms(this.timings.applyS));
    r.timer.unref();
  }

  private finishApply(r: Revision): void {
    if (this.faults.revisionApplyFails)
      return settle(r, 'failed', { message: this.faults.revisionApplyFails, severity: 'error' });
    const next = applyChanges(this.config, r.changes);
    const missing = missingCertificates(next, new Set(this.certificates.keys()), new Set(this.caCertificates.keys()));
    if (missing.length > 0)
      return settle(r, 'failed', { message: `certificate not found: ${missing.join(', ')}`, severity: 'error' });
    // NVOS reports an idempotent apply as `invalid` with this issue (docs/reference/rms-behaviours.md#nvue-revisions).
    if (isDeepStrictEqual(next, this.config))
      return settle(r, 'invalid', { message: NO_CONFIG_DIFF, severity: 'info' });
    for (const [user, u] of Object.entries(next.users)) {
      if (this.config.users[user]?.password !== u.password) this.counters.passwordChanges++;
      this.fs.addHome(user);
    }
    this.config = next;
    settle(r, 'applied');
    this.onChange?.();
  }

  /** `PATCH /revision/applied {"state":"save"}`: the running configuration survives reboots. */
  save(): void {
    this.saved = structuredClone(this.config);
    this.counters.saves++;
  }

  // ---- image partitions -------------------------------------------------------------------------

  /** An install writes the partition not running now and boots it next. */
  stageImage(build: string): void {
    const other: Partition = this.image.current === 1 ? 2 : 1;
    this.image.partitions[other] = build;
    this.image.next = other;
  }

  /** Removes the image of the partition not running now. */
  uninstallUnused(): void {
    delete this.image.partitions[this.image.current === 1 ? 2 : 1];
    this.image.next = this.image.current;
  }

  // ---- reboots ----------------------------------------------------------------------------------

  /**
   * Reboots after handoffS, so a client can still read the action that caused it;
   * with `factoryReset` the configuration, users and certificates go back to defaults first.
   */
  rebootSoon(opts: { factoryReset?: boolean } = {}): void {
    clearTimeout(this.handoffTimer);
    this.handoffTimer = setTimeout(() => this.reboot(opts), this.ms(this.timings.handoffS));
    this.handoffTimer.unref();
  }

  /** NVUE and SSH go away for rebootS; running actions and applies are lost; unsaved configuration too. */
  reboot(opts: { factoryReset?: boolean } = {}): void {
    clearTimeout(this.handoffTimer);
    if (opts.factoryReset) this.resetToDefaults();
    this.rebooting = true;
    this.counters.reboots++;
    this.actions.interruptRunning('interrupted: the system rebooted');
    for (const r of this.revisions.all())
      if (r.state === 'applying')
        settle(r, 'failed', { message: 'interrupted: the system rebooted', severity: 'error' });
    clearTimeout(this.bootTimer);
    this.bootTimer = setTimeout(() => this.boot(), this.ms(this.timings.rebootS));
    this.bootTimer.unref();
    this.onChange?.();
  }

  private boot(): void {
    this.config = structuredClone(this.saved);
    this.image.current = this.image.next;
    // Installed platform firmware becomes active with the power cycle.
    for (const c of firmwareComponents) this.firmware[c].actual = this.firmware[c].installed;
    this.rebooting = false;
    this.bootedAt = Date.now();
    this.onChange?.();
  }

  private resetToDefaults(): void {
    this.counters.factoryResets++;
    if (this.spec.newHostKeyOnFactoryReset)
      this.hostKey = hostKeyFor(`${this.spec.hostKeySeed ?? this.spec.id}#reset-${this.counters.factoryResets}`);
    this.config = defaultConfig();
    this.saved = defaultConfig();
    this.certificates.clear();
    this.caCertificates.clear();
    this.fs.addHome('admin');
  }

  // ---- faults -----------------------------------------------------------------------------------

  setFaults(faults: SwitchFaults): void {
    this.faults = Object.keys(faults).length === 0 ? NO_FAULTS : faults;
    for (const wake of this.faultWaiters) wake();
    this.faultWaiters.clear();
    this.onChange?.();
  }

  /** Resolves at the next setFaults (held requests re-check their fault then) or when `abandon` settles. */
  async faultsChanged(abandon: Promise<void>): Promise<void> {
    let wake: () => void = () => undefined;
    const changed = new Promise<void>((resolve) => (wake = resolve));
    this.faultWaiters.add(wake);
    await Promise.race([abandon, changed]);
    this.faultWaiters.delete(wake);
  }

  stop(): void {
    clearTimeout(this.bootTimer);
    clearTimeout(this.handoffTimer);
    this.actions.stop();
    this.revisions.stop();
    for (const wake of this.faultWaiters) wake();
    this.faultWaiters.clear();
  }
}

import type { Socket } from 'node:net';
import type { PowerState } from '@fleet/domain';
import { bmcBooted, faultCleared, powerChanged } from './announce.js';
import { EventLog, type LogRecord } from './event-log.js';
import { EventService, RETRY_INTERVAL_S } from './event-service.js';
import type { Faults } from './faults.js';
import type { Rack } from './rack.js';
import type { BmcQuirks } from './quirks.js';
import { RequestLog, type LoggedRequest } from './request-log.js';
import { SessionStore } from './sessions.js';
import { TaskStore } from './tasks.js';
import { profiles, type ProfileId } from './profiles/index.js';
import type { FirmwareSpec, Profile } from './profiles/types.js';
import { partSerial, TrayHealth, type ClearEvent, type LogScope } from './tray-health.js';

export type { LoggedRequest } from './request-log.js';

export interface BmcSpec {
  id: string;
  /** Loopback address this BMC answers on, e.g. 127.1.0.7. */
  address: string;
  port: number;
  username: string;
  password: string;
  powerState?: 'On' | 'Off';
  serialNumber?: string;
  /** What this BMC pretends to be; default `gb200-compute`. */
  profile?: ProfileId;
  /** Simultaneous Redfish sessions this BMC allows (real BMCs: 8 to 64). */
  sessionLimit?: number;
  /**
   * The rack power domain: the power shelves of a domain feed every other BMC in it.
   * With every shelf off, the fed BMCs lose AC and stop answering; when a shelf comes
   * back they boot (503 for bmcRebootS) with the host off, as a cold-rebooted rack does.
   */
  powerDomain?: string;
  /** The rack its trays share for the NVLink topology; the power domain when absent (see rack.ts). */
  rack?: string;
  /** MAC address of the BMC's eth0; derived from the id when absent. */
  macAddress?: string;
  /** Position of a compute tray in its rack (Oem.Nvidia.MNNVLinkTopology); derived from the id when absent. */
  topology?: { chassisSerialNumber: string; traySlotNumber: number; traySlotIndex: number };
  /** Real-BMC shapes the profile does not show by default: ActionInfo-only reset types, several systems. */
  quirks?: BmcQuirks;
}

export interface Timings {
  /** Seconds from a power-on request to PowerState On (real trays: tens of seconds). */
  powerOnS: number;
  /** Seconds for a graceful shutdown. */
  gracefulShutdownS: number;
  /** Seconds the BMC keeps the tray off during a power cycle. */
  cycleOffS: number;
  /** Seconds a firmware update task runs (nvfwupd examples: about ten minutes per tray bundle). */
  firmwareUpdateS: number;
  /** Seconds the BMC is unavailable (503) after Manager.Reset ("up to five minutes" on GB200). */
  bmcRebootS: number;
}

export const defaultTimings: Timings = {
  powerOnS: 30,
  gracefulShutdownS: 20,
  cycleOffS: 5,
  firmwareUpdateS: 600,
  bmcRebootS: 120,
};

export const DEFAULT_SESSION_LIMIT = 16;

const resetTypes = [
  'On',
  'ForceOn',
  'ForceOff',
  'GracefulShutdown',
  'GracefulRestart',
  'ForceRestart',
  'PowerCycle',
  'Nmi',
] as const;
export type ResetType = (typeof resetTypes)[number];
export const isResetType = (v: unknown): v is ResetType => resetTypes.includes(v as ResetType);

export interface FirmwareVersion {
  version: string;
  stamp: number;
}

/** One image a Completed update task staged: an entry of the BMC's flash log. */
export interface FlashRecord extends FirmwareVersion {
  /** FirmwareInventory member id, e.g. FW_BMC_0. */
  id: string;
  taskId: string;
  /** The UpdateFile filename the client sent. */
  filename: string;
  /** When the task completed (ISO 8601). */
  at: string;
}

/**
 * The tray stops answering Redfish until cleared: every request times out (accepted, never answered) or has its
 * connection reset. `clearOnReboot`: a BMC reboot ends it, as it ends a wedged web server on a real BMC; the reboot
 * comes from AC (the rack's power shelves off and on) or, with `answersManagerReset`, from Manager.Reset, the one
 * request still served (the BMC's own reset path, IPMI `mc reset` on real hardware, works when its web server hangs).
 */
export interface Unresponsive {
  mode: 'timeout' | 'reset';
  clearOnReboot: boolean;
  answersManagerReset: boolean;
  since: string;
}

const NO_FAULTS: Faults = Object.freeze({});
const LOG_CAPACITY = 1000;

/**
 * One simulated BMC: the host power state machine, BMC reboots, sessions, tasks, firmware
 * state and the request log. Everything beyond the power state is allocated on first use so
 * ten thousand idle BMCs stay small; resource bodies are built per request by the profile.
 */
export class SimulatedBmc {
  powerState: PowerState;
  /** Tail of the per-BMC request chain: a BMC serves one request at a time. */
  queue: Promise<void> = Promise.resolve();
  faults: Faults = NO_FAULTS;
  readonly profile: Profile;
  private timer: NodeJS.Timeout | undefined;
  private rebootTimer: NodeJS.Timeout | undefined;
  private rebootUntilMs = 0;
  private requestLog: RequestLog | undefined;
  /** Every Redfish action (POST …/Actions/…) in full: the ring buffer above can lose them under heavy polling. */
  private actions: LoggedRequest[] | undefined;
  private sessionStore: SessionStore | undefined;
  private taskStore: TaskStore | undefined;
  private installed: Map<string, FirmwareVersion> | undefined;
  private stagedVersions: Map<string, FirmwareVersion> | undefined;
  private flashes: FlashRecord[] | undefined;
  private patched: Map<string, Record<string, unknown>> | undefined;
  private hangWaiters: Set<() => void> | undefined;
  private staleCleared = false;
  private trayHealth: TrayHealth | undefined;
  private logs: Map<string, EventLog> | undefined;
  private eventService: EventService | undefined;
  private heldSockets: Set<Socket> | undefined;
  /** Set while the tray does not answer Redfish (an injected fault). */
  unresponsive: Unresponsive | undefined;
  /** The compute and switch trays of its rack (set by wireRacks), for NVLink peers. */
  rack: Rack | undefined;
  /** The account's password now: the spec's until an AccountService PATCH changes it. */
  password: string;

  constructor(
    readonly spec: BmcSpec,
    readonly timings: Timings,
    readonly timeScale: number,
  ) {
    this.profile = profiles[spec.profile ?? 'gb200-compute'];
    this.powerState = spec.powerState ?? this.profile.initialPower;
    this.password = spec.password;
  }

  /**
   * An AccountService PATCH of the account's Password. As OpenBMC's bmcweb does, every other session of the account
   * ends (logins made with the old password stop working) and the session that made the change, if any, stays. With
   * the refuseNewPassword fault the change is acknowledged but not made. Returns whether the password changed.
   */
  changePassword(userName: string, password: string, keepSessionToken: string | undefined): boolean {
    if (this.faults.refuseNewPassword) return false;
    this.password = password;
    const sessions = this.sessionStore;
    if (sessions)
      for (const [id, s] of sessions.byId)
        if (s.userName === userName && s.token !== keepSessionToken) sessions.byId.delete(id);
    return true;
  }

  get log(): LoggedRequest[] {
    return this.requestLog?.toArray() ?? [];
  }

  /** Every action request (resets, updates), oldest first, however many reads came between them. */
  get actionLog(): LoggedRequest[] {
    return this.actions ?? [];
  }

  /** Requests this BMC received since it started, answered or not; clearing the log keeps the count. */
  requestsServed = 0;

  record(entry: LoggedRequest): void {
    this.requestsServed++;
    (this.requestLog ??= new RequestLog(LOG_CAPACITY)).push(entry);
    if (entry.method === 'POST' && entry.path.includes('/Actions/')) (this.actions ??= []).push(entry);
  }

  clearLog(): void {
    this.requestLog = undefined;
    this.actions = undefined;
  }

  get serialNumber(): string {
    return this.spec.serialNumber ?? `SIM${this.spec.id.toUpperCase().replace(/[^A-Z0-9]/g, '')}`;
  }

  /** Injected part faults and swaps; parts without an entry are healthy and original. */
  health(): TrayHealth {
    return (this.trayHealth ??= new TrayHealth());
  }

  /** True when a fault is injected somewhere on the tray (without allocating the health state). */
  get hasPartFaults(): boolean {
    return (this.trayHealth?.faultCount ?? 0) > 0;
  }

  /** Serial number of one of its parts (a GPU, a CPU, a memory device); a swapped part has a new one. */
  partSerial(partKey: string): string {
    return partSerial(this.spec.id, partKey, this.trayHealth?.generation(partKey) ?? 0);
  }

  // ---- event logs and subscriptions ------------------------------------------------------

  /** The LogService that records events of a scope: GPU events go to the system log, then the manager's. */
  logServiceFor(scope: LogScope): string | undefined {
    const logs = this.profile.eventLogs;
    return logs[scope] ?? (scope === 'gpu' ? logs.system : undefined) ?? logs.manager;
  }

  eventLog(logService: string): EventLog {
    this.logs ??= new Map();
    let log = this.logs.get(logService);
    if (!log) this.logs.set(logService, (log = new EventLog()));
    return log;
  }

  /** A log's entries, oldest first, without allocating a log nobody wrote to. */
  logRecords(logService: string): readonly LogRecord[] {
    return this.logs?.get(logService)?.records ?? [];
  }

  events(): EventService {
    return (this.eventService ??= new EventService(() => this.ms(RETRY_INTERVAL_S)));
  }

  /** The event service when a client ever subscribed (publishing to nobody allocates nothing). */
  get subscribers(): EventService | undefined {
    return this.eventService;
  }

  /** False while nothing on the BMC runs or answers (no AC, rebooting, the unresponsive fault): it sends no events. */
  get reachable(): boolean {
    return !this.acLost && !this.rebooting && !this.unresponsive;
  }

  sessions(): SessionStore {
    return (this.sessionStore ??= new SessionStore(this.spec.sessionLimit ?? DEFAULT_SESSION_LIMIT));
  }

  tasks(): TaskStore {
    return (this.taskStore ??= new TaskStore());
  }

  /** Scales a simulated duration in seconds to timer milliseconds. */
  ms(seconds: number): number {
    return seconds * 1000 * this.timeScale;
  }

  // ---- firmware -------------------------------------------------------------------------

  firmware(spec: FirmwareSpec): FirmwareVersion {
    return this.installed?.get(spec.id) ?? { version: spec.version, stamp: spec.stamp };
  }

  staged(id: string): FirmwareVersion | undefined {
    return this.stagedVersions?.get(id);
  }

  /** Stages the image a Completed update task delivered, and enters it in the flash log. */
  stage(flash: FlashRecord): void {
    (this.stagedVersions ??= new Map()).set(flash.id, { version: flash.version, stamp: flash.stamp });
    (this.flashes ??= []).push(flash);
  }

  /** Every image staged since the simulator started, oldest first: two entries for one id mean it was flashed twice. */
  get flashLog(): readonly FlashRecord[] {
    return this.flashes ?? [];
  }

  /** Staged images become the running ones: called when the BMC or the host comes back from a reset. */
  private activateStaged(): void {
    if (!this.stagedVersions) return;
    this.installed ??= new Map();
    for (const [id, v] of this.stagedVersions) this.installed.set(id, v);
    this.stagedVersions = undefined;
    this.clearFaultsOn('reflash');
  }

  private clearFaultsOn(event: ClearEvent): void {
    for (const [key, f] of this.trayHealth?.clearOn(event) ?? []) faultCleared(this, key, f);
  }

  // ---- PATCHed properties ---------------------------------------------------------------

  patches(path: string): Record<string, unknown> | undefined {
    return this.patched?.get(path);
  }

  applyPatch(path: string, values: Record<string, unknown>): void {
    this.patched ??= new Map();
    this.patched.set(path, { ...this.patched.get(path), ...values });
  }

  // ---- host power -------------------------------------------------------------------------

  reset(type: ResetType): void {
    switch (type) {
      case 'On':
      case 'ForceOn':
        if (this.powerState === 'Off' || this.powerState === 'PoweringOff')
          this.transition('PoweringOn', 'On', this.timings.powerOnS);
        return;
      case 'GracefulShutdown':
        if (this.powerState === 'On' || this.powerState === 'PoweringOn')
          this.transition('PoweringOff', 'Off', this.timings.gracefulShutdownS);
        return;
      case 'ForceOff':
        this.settle('Off');
        return;
      case 'PowerCycle':
      case 'ForceRestart':
      case 'GracefulRestart': {
        const offFor = type === 'GracefulRestart' ? this.timings.gracefulShutdownS : this.timings.cycleOffS;
        this.transition('PoweringOff', 'Off', offFor, () => this.transition('PoweringOn', 'On', this.timings.powerOnS));
        return;
      }
      case 'Nmi':
        return;
    }
  }

  /** Told whenever the power state changes (power domains follow their shelves). */
  onPowerChange: ((bmc: SimulatedBmc) => void) | undefined;
  /** True while the BMC has no AC (its domain's shelves are all off): it answers nothing. */
  acLost = false;

  loseAc(): void {
    if (this.acLost) return;
    this.acLost = true;
    clearTimeout(this.timer);
    clearTimeout(this.rebootTimer);
    this.powerState = 'Off';
    this.sessionStore = undefined;
    this.taskStore?.interruptAll();
  }

  /** AC is back: the BMC boots (answering 503 meanwhile); the host stays off until asked. */
  restoreAc(): void {
    if (!this.acLost) return;
    this.acLost = false;
    this.clearFaultsOn('ac_loss');
    this.rebootManager();
  }

  private transition(via: PowerState, to: PowerState, seconds: number, then?: () => void): void {
    clearTimeout(this.timer);
    this.powerState = via;
    this.onPowerChange?.(this);
    this.timer = setTimeout(() => {
      this.powerState = to;
      this.onPowerChange?.(this);
      powerChanged(this);
      // A host that comes up again runs whatever firmware was staged while it was down.
      if (to === 'On') this.activateStaged();
      then?.();
    }, this.ms(seconds));
    this.timer.unref();
  }

  private settle(state: PowerState): void {
    clearTimeout(this.timer);
    const changed = this.powerState !== state;
    this.powerState = state;
    this.onPowerChange?.(this);
    if (changed) powerChanged(this);
  }

  // ---- BMC reboot -------------------------------------------------------------------------

  get rebooting(): boolean {
    return this.rebootUntilMs > Date.now();
  }

  /** Seconds (simulated clock) until the BMC answers again, for Retry-After. */
  get rebootRetryAfterS(): number {
    return Math.max(1, Math.ceil((this.rebootUntilMs - Date.now()) / 1000 / this.timeScale));
  }

  /** Manager.Reset: sessions and running tasks are lost, staged firmware activates when it is back. */
  rebootManager(): void {
    this.rebootUntilMs = Date.now() + this.ms(this.timings.bmcRebootS);
    this.sessionStore = undefined;
    this.taskStore?.interruptAll();
    clearTimeout(this.rebootTimer);
    if (this.unresponsive?.clearOnReboot) this.setUnresponsive(undefined);
    this.rebootTimer = setTimeout(() => {
      this.rebootUntilMs = 0;
      this.activateStaged();
      bmcBooted(this);
    }, this.ms(this.timings.bmcRebootS));
    this.rebootTimer.unref();
  }

  // ---- faults -----------------------------------------------------------------------------

  setFaults(faults: Faults): void {
    this.faults = Object.keys(faults).length === 0 ? NO_FAULTS : faults;
    this.staleCleared = false;
    if (!faults.hang) this.releaseHung();
  }

  /** True while `path` is a stale link the client has not re-discovered yet. */
  isStale(path: string): boolean {
    return !this.staleCleared && (this.faults.staleLinks?.includes(path) ?? false);
  }

  /** Re-reading the service root is what re-discovery means; stale links work again afterwards. */
  rediscovered(): void {
    if (this.faults.staleLinks) this.staleCleared = true;
  }

  /** Resolves when the hang fault is cleared or the client gives up (`abandon`). */
  async waitWhileHung(abandon: Promise<void>): Promise<void> {
    let wake: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (wake = resolve));
    (this.hangWaiters ??= new Set()).add(wake);
    await Promise.race([abandon, released]);
    this.hangWaiters?.delete(wake);
  }

  /** Starts or (undefined) ends the unresponsive fault; requests held unanswered are dropped when it ends. */
  setUnresponsive(u: Unresponsive | undefined): void {
    this.unresponsive = u;
    if (u || !this.heldSockets) return;
    for (const socket of this.heldSockets) socket.destroy();
    this.heldSockets = undefined;
  }

  /** Keeps a request's connection open and unanswered while the BMC is unresponsive. */
  holdUnanswered(socket: Socket): void {
    (this.heldSockets ??= new Set()).add(socket);
    socket.once('close', () => this.heldSockets?.delete(socket));
  }

  private releaseHung(): void {
    if (!this.hangWaiters) return;
    for (const wake of this.hangWaiters) wake();
    this.hangWaiters = undefined;
  }

  stop(): void {
    clearTimeout(this.timer);
    clearTimeout(this.rebootTimer);
    this.taskStore?.stop();
    this.eventService?.stop();
    this.releaseHung();
    this.setUnresponsive(undefined);
  }
}

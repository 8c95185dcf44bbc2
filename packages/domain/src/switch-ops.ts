import type { ActivityTimeouts } from './contracts.js';
import type { ComponentVersion, FirmwareResultCode, FirmwareStep } from './firmware.js';
import type { NvosTarget } from './switch.js';

/*
 * Operations on NVLink switch trays through NVOS (docs/reference/rms-behaviours.md#switch-operations): password
 * rotation, factory reset, platform firmware and mTLS certificates. Workflows carry the
 * switch's endpoints and a credential *reference*; passwords, keys and certificates stay in
 * the satellite (its secret store and certificate directory).
 */

export interface SwitchPasswordRotationInput {
  jobId: string;
  target: NvosTarget;
  activity: ActivityTimeouts;
}

export interface SwitchPasswordRotationResult {
  deviceId: string;
  username: string;
  /** False when an earlier attempt had already stored the new password and this one only checked it. */
  rotatedNow: boolean;
  /** How the new password was proven: the logins that accepted it. */
  verifiedWith: ('nvue' | 'ssh')[];
}

/**
 * Factory reset waits (docs/reference/rms-behaviours.md#switch-factory-reset): completion is a default-credential SSH
 * login after the reboot.
 */
export interface SwitchRebootTimings {
  pollIntervalS: number;
  /** Longest wait for the switch to come back. */
  maxWaitS: number;
}

export const defaultSwitchRebootTimings: SwitchRebootTimings = { pollIntervalS: 15, maxWaitS: 1200 };

export interface SwitchFactoryResetInput {
  jobId: string;
  target: NvosTarget;
  timings: SwitchRebootTimings;
  activity: ActivityTimeouts;
}

export interface SwitchFactoryResetResult {
  deviceId: string;
  /** The reset was accepted only with admin/admin (the configured credentials were refused). */
  submittedWithDefaults: boolean;
  /**
   * Whether the site's secret store now holds admin/admin under the target's reference (old value kept as `#previous`).
   */
  storedDefaultCredentials: boolean;
  backAfterS: number;
}

/** NVUE's platform firmware components, in the order nvfwupd installs them (test-peers item 4), then CPLD and BIOS. */
export const switchFirmwareComponents = ['bmc', 'erot', 'fpga', 'cpld1', 'bios'] as const;
export type SwitchFirmwareComponent = (typeof switchFirmwareComponents)[number];

/** A manifest step for a switch: one component (`name`), its package, and the version it installs. */
export interface SwitchFirmwareStep extends FirmwareStep {
  name: SwitchFirmwareComponent;
}

/**
 * Switch-tray firmware timings (docs/reference/rms-behaviours.md#firmware-timings), in seconds; tests scale them down.
 */
export interface SwitchFirmwareTimings {
  /** NVUE action poll interval while a component installs. */
  actionPollS: number;
  /** One component install (nvfwupd switch budget: 1200 s). */
  actionTimeoutS: number;
  /** Activation recovery probe: GET /nvue_v1/platform/firmware every this often (15 s)… */
  recoveryProbeS: number;
  /** …this many times (45). */
  recoveryProbes: number;
}

export const defaultSwitchFirmwareTimings: SwitchFirmwareTimings = {
  actionPollS: 10,
  actionTimeoutS: 1200,
  recoveryProbeS: 15,
  recoveryProbes: 45,
};

export interface SwitchFirmwareUpdateInput {
  jobId: string;
  target: NvosTarget;
  steps: SwitchFirmwareStep[];
  /** Install even components already at the target, and allow downgrades. */
  force: boolean;
  timings: SwitchFirmwareTimings;
  activity: ActivityTimeouts;
}

export interface SwitchFirmwareReading {
  deviceId: string;
  /** Versions running now. */
  components: ComponentVersion[];
  /** Versions installed for the next power cycle, where they differ from the running ones. */
  pending: ComponentVersion[];
}

export type SwitchInstallOutcome =
  /** `alreadyInstalled`: the switch had the version installed for the next power cycle; nothing was sent. */
  | { state: 'installed'; installed: string; alreadyInstalled: boolean; actionId?: string }
  | { state: 'failed'; code: FirmwareResultCode; message: string };

export interface SwitchCertificateInstallInput {
  jobId: string;
  target: NvosTarget;
  /** The certificate set (`<switch cert root>/<domain>/` on the satellite), as RMS's `domain`. */
  domain: string;
  activity: ActivityTimeouts;
}

export interface SwitchCertificateResult {
  deviceId: string;
  domain: string;
  certificateId: string;
  caCertificateId: string;
  /** False when the switch already had both and served the API with them. */
  changed: boolean;
  validTo: string | null;
}

/** One round of NVUE hellos (GET /nvue_v1/system) over a rack's switch trays. */
export interface NvueHelloResult {
  answered: string[];
  /** Switches that did not answer, with why; `permanent` when waiting cannot change it (credentials, host key, TLS). */
  failed: { deviceId: string; error: { type: string; message: string }; permanent: boolean }[];
}

/** What switch workflows ask of a site's satellite (types only; the satellite implements them). */
export interface SwitchActivities {
  /**
   * New strong password generated on the satellite, applied, verified by login, then stored under the same reference.
   */
  rotateSwitchPassword(input: { target: NvosTarget }): Promise<SwitchPasswordRotationResult>;
  /** Submits the factory reset once across retries, then waits for a default-credential SSH login. */
  resetSwitchToFactoryDefault(input: {
    target: NvosTarget;
    timings: SwitchRebootTimings;
  }): Promise<SwitchFactoryResetResult>;
  readSwitchFirmware(input: { target: NvosTarget }): Promise<SwitchFirmwareReading>;
  /** SFTP of a cached package into /host/fw-images (skipped when the switch has a file of that size). */
  stageSwitchFirmware(input: {
    target: NvosTarget;
    step: SwitchFirmwareStep;
  }): Promise<{ remotePath: string; bytes: number; uploaded: boolean }>;
  /** The NVUE install action of one staged component, followed to its end; resumes the recorded action on retry. */
  installSwitchFirmware(input: {
    target: NvosTarget;
    step: SwitchFirmwareStep;
    force: boolean;
    pollIntervalS: number;
    timeoutS: number;
  }): Promise<SwitchInstallOutcome>;
  /** Activation: NVUE power cycle (sent once across retries), then the platform-firmware recovery probe. */
  powerCycleSwitch(input: {
    target: NvosTarget;
    probeIntervalS: number;
    probes: number;
  }): Promise<{ deviceId: string; outageSeen: boolean; backAfterS: number }>;
  /**
   * Imports the domain's CA and switch certificate, binds the NVUE API to them, and checks them over a new connection.
   */
  installSwitchCertificate(input: { target: NvosTarget; domain: string }): Promise<SwitchCertificateResult>;
  /** Asks every switch's NVUE once, concurrently (cold reboot's verify_nvos_ready); the workflow owns the backoff. */
  nvueHello(input: { targets: NvosTarget[] }): Promise<NvueHelloResult>;
}

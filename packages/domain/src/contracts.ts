import type { PowerAction, PowerState } from './power.js';
import type { HardwareInventoryActivities } from './hardware-inventory.js';
import type { VerificationActivities } from './enrolment.js';

/**
 * Where and how a satellite reaches a device's BMC. Carries a credential *reference*
 * that only the satellite's own secret store can resolve; never a secret.
 */
export interface BmcTarget {
  deviceId: string;
  nodeType: string;
  bmcUrl: string;
  credentialRef: string;
  /** The Redfish ComputerSystem Id that is this device, on BMCs that list several (inventory `redfish_system_id`). */
  redfishSystemId?: string;
}

export interface ActivityTimeouts {
  /** Seconds without a heartbeat before Temporal retries the activity elsewhere. */
  heartbeatTimeoutS: number;
  /** Seconds a single attempt may take. */
  startToCloseTimeoutS: number;
  /** Attempts before the job fails. */
  maximumAttempts: number;
}

export interface DevicePowerInput {
  jobId: string;
  target: BmcTarget;
  action: PowerAction;
  /** Seconds to wait for the device to settle after the reset request. */
  settleTimeoutS: number;
  activity: ActivityTimeouts;
}

export interface DevicePowerResult {
  deviceId: string;
  action: PowerAction;
  powerState: PowerState;
  /** False when the device was already in the asked state and nothing was sent. */
  resetSent: boolean;
}

/** Activity signatures, shared by the satellite (implementation) and workflows (types only). */
export interface PowerActivities {
  setDevicePower(input: { target: BmcTarget; action: PowerAction; settleTimeoutS: number }): Promise<DevicePowerResult>;
}

/** The management controllers Manager.Reset can reboot: the tray BMC and (compute only) the HGX HMC. */
export type ManagerKind = 'bmc' | 'hmc';

/**
 * One look at a device's BMC. Reachable when the power query answers with a state
 * (docs/reference/rms-behaviours.md#reachability-gates: "reachable = power query returns On/Off"; transitional states
 * count as reachable too, so a BMC still answering PoweringOff never passes a discharge gate).
 */
export type DeviceProbe =
  { reachable: true; powerState: Exclude<PowerState, 'Unknown'> } | { reachable: false; reason: string };

export type DeviceReading = { deviceId: string } & DeviceProbe;

export interface BmcResetResult {
  deviceId: string;
  manager: ManagerKind;
  /** Whether this attempt (or an earlier one) saw the controller stop answering after the reset. */
  outageSeen: boolean;
  /** Seconds from the reset request until the controller answered again. */
  backAfterS: number;
}

/** What awaitDevices waits for on every target (docs/reference/rms-behaviours.md#reachability-gates). */
export type AwaitCondition = 'off' | 'on' | 'unreachable' | 'reachable';

export interface AwaitDevicesResult {
  condition: AwaitCondition;
  met: string[];
  /**
   * Devices that had not met the condition when the wait ended, with what was last seen;
   * `error` when the device could not be asked at all (credentials, unknown type, TLS).
   */
  notMet: { deviceId: string; last: DeviceProbe | null; error?: { type: string; message: string } }[];
  elapsedS: number;
}

/** Everything rack workflows ask of a site's devices (types only; the satellite implements them). */
export interface DeviceActivities extends PowerActivities, HardwareInventoryActivities, VerificationActivities {
  /**
   * Manager.Reset on the BMC or HMC, then waits until it answers again. Sends the reset at most once across retries.
   */
  resetBmc(input: { target: BmcTarget; manager: ManagerKind; waitUntilBackS: number }): Promise<BmcResetResult>;
  /** Polls every target until all meet `condition` or `maxWaitS` passes; never throws on timeout. */
  awaitDevices(input: {
    targets: BmcTarget[];
    condition: AwaitCondition;
    pollIntervalS: number;
    maxWaitS: number;
  }): Promise<AwaitDevicesResult>;
  /** One probe of one device (power state refresh). */
  readDevicePower(input: { target: BmcTarget }): Promise<DeviceReading>;
}

export interface DeviceBmcResetInput {
  jobId: string;
  target: BmcTarget;
  manager: ManagerKind;
  waitUntilBackS: number;
  activity: ActivityTimeouts;
}

export interface DevicePowerRefreshInput {
  jobId: string;
  target: BmcTarget;
  activity: ActivityTimeouts;
}

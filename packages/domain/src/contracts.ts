import type { PowerAction, PowerState } from './power.js';

/**
 * Where and how a satellite reaches a device's BMC. Carries a credential *reference*
 * that only the satellite's own secret store can resolve; never a secret.
 */
export interface BmcTarget {
  deviceId: string;
  nodeType: string;
  bmcUrl: string;
  credentialRef: string;
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
  setDevicePower(input: {
    target: BmcTarget;
    action: PowerAction;
    settleTimeoutS: number;
  }): Promise<DevicePowerResult>;
}

import type {
  BmcTarget,
  ComponentVersion,
  DeviceProbe,
  HardwareInventory,
  HealthReading,
  ManagerKind,
  NodeType,
  PowerAction,
  PowerState,
  RedfishResetType,
} from '@fleet/domain';
import type { RedfishClientOptions, TaskResult } from '@fleet/redfish';

export interface BmcCredentials {
  username: string;
  password: string;
}

/** How a site reaches its BMCs: auth mode, TLS policy, timeouts and the site-wide cap. */
export type RedfishTransport = Pick<
  RedfishClientOptions,
  | 'auth'
  | 'tls'
  | 'siteLimiter'
  | 'logger'
  | 'connectTimeoutMs'
  | 'requestTimeoutMs'
  | 'uploadTimeoutMs'
  | 'maxAttempts'
  | 'discovery'
> & {
  /**
   * Leaf pins of single BMCs (SHA-256), by the host of the BMC URL (with its port when not the default): each BMC
   * presents a certificate of its own. A BMC named here is checked by its pin; the others by `tls`.
   */
  pinsByHost?: Readonly<Record<string, string>>;
};

export interface DriverContext {
  target: BmcTarget;
  credentials: BmcCredentials;
  signal?: AbortSignal;
  redfish?: RedfishTransport;
}

/** Whether a management controller answers (after a Manager.Reset, say). */
export type ManagerProbe = { reachable: true } | { reachable: false; reason: string };

/** A BMC update task as a task scan finds it. */
export interface FirmwareTaskStatus {
  taskUri: string;
  state: 'pending' | 'succeeded' | 'failed';
  taskState: string | null;
  percent: number | null;
  reason?: string;
  /** Whether the task names the file asked about (else it is another update keeping the BMC busy). */
  ours: boolean;
}

/** Firmware through the node's BMC: installed versions, package push, task monitoring. */
export interface FirmwareOps {
  inventory(): Promise<ComponentVersion[]>;
  push(opts: { filePath: string; fileName: string; targets: string[]; force: boolean }): Promise<{ taskUri: string }>;
  /** The update task that names `fileName`, else a running update task of any file, else undefined. */
  findUpdateTask(fileName: string): Promise<FirmwareTaskStatus | undefined>;
  awaitTask(
    taskUri: string,
    opts: {
      pollIntervalMs: number;
      timeoutMs: number;
      signal?: AbortSignal;
      onProgress?: (percent: number, taskState: string) => void;
    },
  ): Promise<TaskResult>;
}

/** Power state, power and controller resets, and reachability probes on one node, through its BMC. */
export interface PowerDriver {
  readonly nodeType: NodeType;
  readonly kind: 'compute' | 'switch' | 'power_shelf';
  /** Controllers that accept Manager.Reset on this node. */
  readonly managers: readonly ManagerKind[];
  /** ResetTypes `reset()` sends; anything else is refused before it reaches the wire. */
  readonly resetTypes: readonly RedfishResetType[];
  /** The ResetType this node uses for a fleet power action (UnsupportedOperationError if it has none). */
  resetTypeFor(action: PowerAction): RedfishResetType;
  powerState(): Promise<PowerState>;
  reset(type: RedfishResetType): Promise<void>;
  /** Manager.Reset (GracefulRestart); the controller answers 503 until it is back. */
  resetManager(manager: ManagerKind): Promise<void>;
  /** One power query, single attempt: a BMC that does not answer with a state is unreachable. */
  probe(): Promise<DeviceProbe>;
  /** One look at whether `manager` answers again, single attempt. */
  probeManager(manager: ManagerKind): Promise<ManagerProbe>;
}

/** A device's hardware inventory and the Redfish resources it was parsed from, by URI. */
export interface DeviceInventoryRead {
  inventory: HardwareInventory;
  resources: Record<string, unknown>;
}

/**
 * What every node driver offers: power, plus firmware and the hardware inventory through the same BMC. One driver
 * instance talks to one BMC, one request at a time; `close()` releases its connections. Drivers neither orchestrate
 * nor persist.
 */
export interface NodeDriverBase extends PowerDriver {
  readonly firmware: FirmwareOps;
  /** Reads the hardware resource by resource; `onProgress` hears how many resources have been read. */
  readHardwareInventory(opts?: { onProgress?: (resources: number) => void }): Promise<DeviceInventoryRead>;
  /**
   * One health reading (docs/day2.md): power state and the faults the BMC reports, single attempt. A healthy device
   * costs its system and chassis (two GETs once discovered; a shelf one), the parts are read only under a rollup that
   * is not OK. A BMC that refuses the credentials or does not answer gives a reading too; throws on cancellation and
   * on what no later reading fixes by itself (TLS refused, the device's system missing).
   */
  readHealth(): Promise<HealthReading>;
  close(): Promise<void>;
}

/**
 * Compute trays: host power through ComputerSystem.Reset on the device's system (System_0 unless named); BMC_0 and
 * HGX_BMC_0 (HMC).
 */
export interface ComputeTrayDriver extends NodeDriverBase {
  readonly kind: 'compute';
  readonly managers: readonly ['bmc', 'hmc'];
}

/** NVLink switch trays, Redfish side: host power through System_0, BMC_0 only (NVOS is NVUE's business). */
export interface SwitchTrayDriver extends NodeDriverBase {
  readonly kind: 'switch';
  readonly managers: readonly ['bmc'];
}

/** Power shelves: output through Chassis.Reset on chassis `powershelf`; the PMC (BMC_0) is on standby power. */
export interface PowerShelfDriver extends NodeDriverBase {
  readonly kind: 'power_shelf';
  readonly managers: readonly ['bmc'];
}

export type NodeDriver = ComputeTrayDriver | SwitchTrayDriver | PowerShelfDriver;

export type PowerDriverFactory = (ctx: DriverContext) => NodeDriver;

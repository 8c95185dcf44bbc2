import type { ResetType, SimulatedBmc } from '../bmc.js';
import type { NodeKind } from '@fleet/domain';
import type { DeviceParts, LogScope } from '../tray-health.js';

export type Body = Record<string, unknown>;
/** Builds one resource body from the BMC's current state; called per request, never cached. */
export type Builder = (bmc: SimulatedBmc) => Body;

export interface FirmwareSpec {
  /** FirmwareInventory member id, e.g. FW_BMC_0. */
  id: string;
  description: string;
  /** The resource this image runs on (SoftwareInventory.RelatedItem). */
  related: string;
  version: string;
  /** PLDM ComponentComparisonStamp of the installed image; a package with a lower stamp is a downgrade. */
  stamp: number;
  /** PLDM ComponentIdentifier; components without one are not updatable by package (e.g. InfoROM). */
  componentId?: number;
  /** UUID (hex) descriptor of the PLDM firmware device that carries this component. */
  device?: string;
  softwareId: string;
}

export interface PowerControl {
  /** The resource whose PowerState follows the power state machine. */
  resource: string;
  /** The reset action's target URI. */
  action: string;
  /** Action name for error messages, e.g. ComputerSystem.Reset. */
  actionName: string;
  resetTypes: readonly ResetType[];
}

export interface Profile {
  id: string;
  /** What a human calls it, e.g. "NVIDIA GB200 NVL compute tray". */
  label: string;
  /** The kind of node it simulates; a power shelf feeds its power domain. */
  kind: NodeKind;
  initialPower: 'On' | 'Off';
  resources: ReadonlyMap<string, Builder>;
  /** Properties a client may PATCH, per resource path. */
  writable: ReadonlyMap<string, readonly string[]>;
  firmware: readonly FirmwareSpec[];
  /** Update targets besides FirmwareInventory members, e.g. HGX_Chassis_0 → every HGX_* component. */
  targetGroups: ReadonlyMap<string, readonly string[]>;
  power: PowerControl;
  /** UpdateService.MaxImageSizeBytes: larger pushes are refused with 413. */
  maxImageBytes: number;
  /** Manager resources that accept Manager.Reset (a BMC reboot); the first is the BMC itself. */
  managers: readonly string[];
  /** The EventLog LogService of each log scope the BMC has (see SimulatedBmc.logServiceFor). */
  eventLogs: Partial<Record<LogScope, string>>;
  /** The parts the admin API may fault (and swap); a device without them takes no part faults. */
  parts?: DeviceParts;
}

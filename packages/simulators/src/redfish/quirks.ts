import type { ResetType, SimulatedBmc } from './bmc.js';
import type { Body } from './profiles/types.js';

/** Shapes of real BMCs that a profile does not show by default, chosen per BMC in its spec. */
export interface BmcQuirks {
  /**
   * Reset actions name their allowed ResetTypes only through `@Redfish.ActionInfo`, never inline,
   * as NVIDIA's OpenBMC does (GH200 capture; BlueField BMCs for Chassis.Reset).
   */
  resetTypesInActionInfoOnly?: boolean;
  /** The power reset allows only these (a BlueField chassis takes PowerCycle only); default: the profile's. */
  resetTypes?: readonly ResetType[];
  /** Further host systems listed after the profile's own, as a bladed enclosure's BMC does (trays only). */
  extraSystems?: readonly string[];
  /** The service root links no EventService, as BMCs without push events (the resource itself stays, unlinked). */
  noEventService?: boolean;
  /**
   * The service root advertises every `$expand` feature false and the parameter is ignored, as a BMC without query
   * support may do (bmcweb built without its query support refuses it with 501 instead; Fleet's client handles both):
   * a client must read a collection's members one by one.
   */
  noExpandQuery?: boolean;
}

export const SYSTEMS = '/redfish/v1/Systems';

export function allowedResetTypes(bmc: SimulatedBmc): readonly ResetType[] {
  return bmc.spec.quirks?.resetTypes ?? bmc.profile.power.resetTypes;
}

export function extraSystemPaths(bmc: SimulatedBmc): string[] {
  return (bmc.spec.quirks?.extraSystems ?? []).map((id) => `${SYSTEMS}/${id}`);
}

/** An extra system's resource: a powered-off host of its own that takes no actions here. */
export function extraSystem(bmc: SimulatedBmc, path: string): Body | undefined {
  if (!extraSystemPaths(bmc).includes(path)) return undefined;
  const id = path.slice(SYSTEMS.length + 1);
  return {
    '@odata.id': path,
    '@odata.type': '#ComputerSystem.v1_22_0.ComputerSystem',
    Id: id,
    Name: id,
    SystemType: 'Physical',
    PowerState: 'Off',
    Status: { State: 'StandbyOffline', Health: 'OK' },
  };
}

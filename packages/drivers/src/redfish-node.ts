import type { ManagerKind, NodeType, PowerAction, PowerState, RedfishResetType } from '@fleet/domain';
import {
  managerIds,
  readDeviceHealth,
  readHardwareInventory,
  readManager,
  resetManager,
  type HealthSource,
  type InventorySource,
  type RedfishClient,
} from '@fleet/redfish';
import { DriverClients } from './clients.js';
import { redfishFirmware } from './firmware.redfish.js';
import { UnsupportedOperationError } from './errors.js';
import { observeHealth } from './health.js';
import { probeAnswer, probePower } from './probe.js';
import type { DriverContext, NodeDriverBase, PowerDriver } from './types.js';

/** Where a node's power lives: the resource whose PowerState is read and whose reset action is posted. */
export interface PowerDomain {
  state(client: RedfishClient): Promise<PowerState>;
  reset(client: RedfishClient, type: RedfishResetType): Promise<void>;
}

export interface RedfishNodeSpec<K extends PowerDriver['kind'], M extends readonly ManagerKind[]> {
  nodeType: NodeType;
  kind: K;
  managers: M;
  resetTypes: readonly RedfishResetType[];
  /** Fleet power action → ResetType; an action left out is one this node cannot do. */
  actions: Partial<Record<PowerAction, RedfishResetType>>;
  power: PowerDomain;
  /** Where the device itself is for its hardware inventory: its host system, or (a shelf) its chassis. */
  inventory: InventorySource;
  /** Where its health is read: the chassis that is the device, and its host system if it has one. */
  health: HealthSource;
}

/** A driver for any Redfish node: the spec says where its power lives and what it accepts. */
export function redfishNode<K extends PowerDriver['kind'], M extends readonly ManagerKind[]>(
  spec: RedfishNodeSpec<K, M>,
  ctx: DriverContext,
): NodeDriverBase & { kind: K; managers: M } {
  const clients = new DriverClients(ctx);
  const requireManager = (m: ManagerKind) => {
    if (!spec.managers.includes(m))
      throw new UnsupportedOperationError(spec.nodeType, `Manager.Reset on the ${m.toUpperCase()}`);
  };
  const probe = () => probePower(() => spec.power.state(clients.probe()));
  return {
    nodeType: spec.nodeType,
    kind: spec.kind,
    managers: spec.managers,
    resetTypes: spec.resetTypes,
    resetTypeFor(action) {
      const type = spec.actions[action];
      if (!type) throw new UnsupportedOperationError(spec.nodeType, `power action ${action}`);
      return type;
    },
    powerState: () => spec.power.state(clients.main()),
    async reset(type) {
      if (!spec.resetTypes.includes(type)) throw new UnsupportedOperationError(spec.nodeType, `ResetType ${type}`);
      await spec.power.reset(clients.main(), type);
    },
    async resetManager(manager) {
      requireManager(manager);
      await resetManager(clients.main(), manager, 'GracefulRestart');
      clients.invalidate();
    },
    probe,
    async probeManager(manager) {
      requireManager(manager);
      // The BMC is back when it answers the power query again (what rack gates ask of it);
      // the HMC when its own manager resource answers.
      if (manager === 'bmc') {
        const p = await probe();
        return p.reachable ? { reachable: true } : p;
      }
      return probeAnswer(() => readManager(clients.probe(), managerIds[manager]));
    },
    firmware: redfishFirmware(clients),
    async readHardwareInventory(opts = {}) {
      const read = await readHardwareInventory(clients.main(), {
        source: spec.inventory,
        ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
      });
      const device = { deviceId: ctx.target.deviceId, nodeType: spec.nodeType, kind: spec.kind };
      return { inventory: { ...device, ...read.inventory }, resources: read.resources };
    },
    // Single attempt, like a probe: a BMC that does not answer now is this interval's reading, not a wait.
    readHealth: () => observeHealth(() => readDeviceHealth(clients.probe(), spec.health)),
    close: () => clients.close(),
  };
}

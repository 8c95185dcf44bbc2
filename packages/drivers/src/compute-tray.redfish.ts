import { getPowerState, RedfishClient, resetSystem } from '@fleet/redfish';
import type { DriverContext, PowerDriver } from './types.js';

/** NVIDIA GB200/GB300 compute trays: host power through Redfish System_0. */
export function createRedfishComputeTray(nodeType: string) {
  return (ctx: DriverContext): PowerDriver => {
    const client = new RedfishClient({
      baseUrl: ctx.target.bmcUrl,
      credentials: ctx.credentials,
      ...ctx.redfish,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    return {
      nodeType,
      powerState: () => getPowerState(client),
      reset: (type) => resetSystem(client, type),
      close: () => client.close(),
    };
  };
}

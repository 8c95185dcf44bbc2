import { credentialsRefusedReading, unreachableReading, type HealthReading } from '@fleet/domain';
import { RedfishError, type HealthSource } from '@fleet/redfish';
import { notAnswering } from './probe.js';

/**
 * The chassis that is an NVIDIA tray (the compute tray's module, the switch tray's enclosure): its HealthRollup
 * covers every part on the tray, so with the host system it is all a healthy tray's reading costs.
 */
export const trayChassisId = 'BMC_0';

/** Where a tray's health is read: its host system (by Id on BMCs that list several) and its chassis. */
export const trayHealth = (systemId: string | undefined): HealthSource => ({
  system: { id: systemId },
  chassis: trayChassisId,
});

/**
 * A reading whatever the BMC does: one that refuses the credentials (401/403) or does not answer (no connection,
 * timeout, reset, 5xx) is a reading with that fault, as the observer records it. Anything else is thrown: cancellation,
 * and what no later reading fixes by itself (a TLS refusal, a device naming a system its BMC lacks).
 */
export async function observeHealth(read: () => Promise<HealthReading>): Promise<HealthReading> {
  try {
    return await read();
  } catch (err) {
    if (!(err instanceof RedfishError)) throw err;
    if (err.code === 'Unauthenticated') return credentialsRefusedReading(err.message);
    if (notAnswering.has(err.code)) return unreachableReading(err.message);
    throw err;
  }
}

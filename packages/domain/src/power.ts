import { z } from 'zod';
import { hardwareOf } from './hardware.js';

export const powerActions = [
  'on',
  'off',
  'force-on',
  'force-off',
  'power-cycle',
  'graceful-shutdown',
  'graceful-restart',
  'force-restart',
] as const;
export const PowerAction = z.enum(powerActions);
export type PowerAction = z.infer<typeof PowerAction>;

/** Redfish ComputerSystem.PowerState values, plus Unknown before the first read. */
export const powerStates = ['On', 'Off', 'PoweringOn', 'PoweringOff', 'Paused', 'Unknown'] as const;
export const PowerState = z.enum(powerStates);
export type PowerState = z.infer<typeof PowerState>;

export type RedfishResetType =
  'On' | 'ForceOn' | 'ForceOff' | 'GracefulShutdown' | 'GracefulRestart' | 'ForceRestart' | 'PowerCycle' | 'Nmi';

/**
 * RMS's PowerOperation → ResetType mapping (docs/reference/rms-behaviours.md#reset-types): "off" is a graceful
 * shutdown.
 */
export const resetTypeFor: Record<PowerAction, RedfishResetType> = {
  on: 'On',
  off: 'GracefulShutdown',
  'force-on': 'ForceOn',
  'force-off': 'ForceOff',
  'power-cycle': 'PowerCycle',
  'graceful-shutdown': 'GracefulShutdown',
  'graceful-restart': 'GracefulRestart',
  'force-restart': 'ForceRestart',
};

/** The state a device settles in once the action has completed. */
export const settledStateFor: Record<PowerAction, 'On' | 'Off'> = {
  on: 'On',
  off: 'Off',
  'force-on': 'On',
  'force-off': 'Off',
  'power-cycle': 'On',
  'graceful-shutdown': 'Off',
  'graceful-restart': 'On',
  'force-restart': 'On',
};

/**
 * Whether an action is already satisfied by the current state, so that a retried
 * activity (or a repeated request) does not touch the device again. Restarts and
 * cycles are never "already done": their effect is the transition itself.
 */
export function isPowerActionSatisfied(action: PowerAction, state: PowerState): boolean {
  switch (action) {
    case 'on':
    case 'force-on':
      return state === 'On';
    case 'off':
    case 'force-off':
    case 'graceful-shutdown':
      return state === 'Off';
    default:
      return false;
  }
}

/**
 * The power domain a device draws from. NVL72 power shelves feed the whole rack through its
 * busbar, so a rack is one domain; a device outside any rack is a domain of its own.
 */
export function powerDomainOf(d: { id: string; rackId: string | null }): string {
  return d.rackId ?? `device:${d.id}`;
}

/** Whether applying the action to a power shelf interrupts its output at some point. */
export const interruptsShelfOutput = (action: PowerAction): boolean => action !== 'on' && action !== 'force-on';

/**
 * The power domains in which an unordered batch would act on power shelves and on devices they
 * feed at once. Those devices would lose AC in the middle of their own action and fail or not
 * depending on timing; only the rack sequence, which orders shelves and trays, does that safely.
 */
export function domainsPoweredOffUnderfoot(
  devices: readonly { id: string; rackId: string | null; nodeType: string | null }[],
  action: PowerAction,
): string[] {
  if (!interruptsShelfOutput(action)) return [];
  const byDomain = new Map<string, { shelves: number; fed: number }>();
  for (const d of devices) {
    const domain = powerDomainOf(d);
    const counts = byDomain.get(domain) ?? { shelves: 0, fed: 0 };
    // A device whose reset switches a shelf output feeds the others in its power domain.
    if (d.nodeType !== null && hardwareOf(d.nodeType)?.reset === 'shelf-output') counts.shelves++;
    else counts.fed++;
    byDomain.set(domain, counts);
  }
  return [...byDomain].filter(([, c]) => c.shelves > 0 && c.fed > 0).map(([domain]) => domain);
}

import { deltaPowerShelf } from './powershelf-delta.js';
import { gb200Compute } from './gb200-compute.js';
import { gb300Compute } from './gb300-compute.js';
import { liteonPowerShelf } from './powershelf-liteon.js';
import { nvswitchTray } from './nvswitch-tray.js';
import type { Profile } from './types.js';

export const profileIds = [
  'gb200-compute',
  'gb300-compute',
  'powershelf-liteon',
  'powershelf-delta',
  'nvswitch-tray',
] as const;
export type ProfileId = (typeof profileIds)[number];

/** Every simulated device kind, built once and shared by all BMCs of that kind. */
export const profiles: Record<ProfileId, Profile> = {
  'gb200-compute': gb200Compute,
  'gb300-compute': gb300Compute,
  'powershelf-liteon': liteonPowerShelf,
  'powershelf-delta': deltaPowerShelf,
  'nvswitch-tray': nvswitchTray,
};

export type { Profile, FirmwareSpec } from './types.js';

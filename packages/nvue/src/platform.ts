import type { CallOptions, NvueClient } from './client.js';
import { runAction, type ActionResult, type WaitForActionOptions } from './actions.js';
import { assertImageFilename } from './filenames.js';

/** Switch-tray components NVUE installs firmware for, in the names its install paths use (test-peers item 4). */
export const platformComponents = ['bmc', 'erot', 'fpga', 'cpld1', 'bios'] as const;
export type PlatformComponent = (typeof platformComponents)[number];

export interface PlatformFirmware {
  /** Lower-case component name (`bmc`, `cpld1`…). */
  component: string;
  /** Version running now. */
  actual: string | undefined;
  /** Version installed for the next power cycle. */
  installed: string | undefined;
}

/** `GET /platform/firmware`, a map keyed by component in any case. */
export async function getPlatformFirmware(c: NvueClient, opts: CallOptions = {}): Promise<PlatformFirmware[]> {
  const body = await c.getObject('/platform/firmware', opts);
  const s = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return Object.entries(body)
    .filter(([, v]) => typeof v === 'object' && v !== null)
    .map(([name, v]) => {
      const f = v as Record<string, unknown>;
      return {
        component: name.toLowerCase(),
        actual: s(f['actual-firmware']) ?? s(f['version']),
        installed: s(f['installed-firmware']),
      };
    })
    .sort((a, b) => a.component.localeCompare(b.component));
}

/**
 * Installs a component image already staged under /host/fw-images (SFTP). It becomes the
 * running version after the next power cycle. `force` allows a downgrade.
 */
export async function installPlatformFirmware(
  c: NvueClient,
  component: PlatformComponent,
  file: string,
  opts: WaitForActionOptions & { force?: boolean } = {},
): Promise<ActionResult> {
  assertImageFilename(file);
  const body = { '@install': { state: 'start', parameters: { force: opts.force ?? false } } };
  return runAction(c, `/platform/firmware/${component}/files/${encodeURIComponent(file)}`, body, opts);
}

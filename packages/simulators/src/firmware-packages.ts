import { DESCRIPTOR_UUID, type FwpkgSpec } from '@fleet/fwpkg';
import { profiles, type ProfileId } from './redfish/profiles/index.js';

/** DSP0267 ComponentClassification "Firmware". */
const CLASSIFICATION_FIRMWARE = 0x000a;

/** One PLDM firmware device of a profile (a tray half, a PMC, the PSUs) and the components it carries. */
export interface ProfilePart {
  device: string;
  components: string[];
}

/** The package-updatable parts of a simulated BMC, in firmware-inventory order (BMC tray first). */
export function profileParts(profileId: ProfileId): ProfilePart[] {
  const parts = new Map<string, string[]>();
  for (const f of profiles[profileId].firmware) {
    if (f.device === undefined || f.componentId === undefined) continue;
    parts.set(f.device, [...(parts.get(f.device) ?? []), f.id]);
  }
  return [...parts].map(([device, components]) => ({ device, components }));
}

/**
 * A package the simulated BMC accepts for one part: a device record carrying the part's UUID
 * descriptor and one image per component at `version`. `stamp` below the shipped one makes a
 * downgrade; `imageBytes` sizes each image (default 4 KiB).
 */
export function profilePackageSpec(
  profileId: ProfileId,
  part: ProfilePart,
  version: string,
  opts: { stamp?: number; imageBytes?: number } = {},
): FwpkgSpec {
  const specs = profiles[profileId].firmware.filter((f) => f.device === part.device && f.componentId !== undefined);
  const stamp = opts.stamp ?? Math.max(...specs.map((s) => s.stamp)) + 1;
  return {
    revision: '1.0',
    packageVersion: version,
    devices: [
      {
        descriptors: [{ type: DESCRIPTOR_UUID, data: part.device }],
        applicableComponents: specs.map((_, i) => i),
        imageSetVersion: version,
      },
    ],
    components: specs.map((s, i) => ({
      classification: CLASSIFICATION_FIRMWARE,
      identifier: s.componentId!,
      comparisonStamp: stamp,
      version,
      image: { size: opts.imageBytes ?? 4096, fill: 0x40 + (i % 64) },
    })),
  };
}

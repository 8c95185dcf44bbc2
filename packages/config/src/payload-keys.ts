import { z } from 'zod';

/**
 * Where a process finds the Temporal payload key rings (docs/security.md): one ring for every site (`keyRingFile`),
 * or a ring per site (`keyRingDir`, `<siteId>.json` each), exactly one of the two; `extra` adds a process's own keys.
 */
export function PayloadKeyRingConfig<E extends z.ZodRawShape = Record<never, never>>(extra: E = {} as E) {
  return z
    .object({
      /** One ring (mode 0600) for every site: the one each satellite holds by reference too. */
      keyRingFile: z.string().min(1).optional(),
      /** A ring per site, `<dir>/<siteId>.json`, each the one that site's satellite holds: no site reads another's. */
      keyRingDir: z.string().min(1).optional(),
      ...extra,
    })
    .strict()
    .refine((c) => exactlyOne(c as { keyRingFile?: string; keyRingDir?: string }), {
      message: 'give keyRingFile (one ring for every site) or keyRingDir (a ring per site), not both',
      path: ['keyRingFile'],
    });
}

const exactlyOne = (c: { keyRingFile?: string; keyRingDir?: string }) =>
  (c.keyRingFile === undefined) !== (c.keyRingDir === undefined);

import { z } from 'zod';

/*
 * The exact request bodies NVUE accepts (docs/reference/rms-behaviours.md#nvue, test-peers item 5, nvfwupd's switch
 * target). Anything else is a 400: the simulator is the test double that proves the client
 * sends these shapes, so it must not be lenient.
 */

const start = <P extends z.ZodRawShape>(parameters: P) =>
  z.object({ state: z.literal('start'), parameters: z.object(parameters).strict() }).strict();
const action = <K extends string, S extends z.ZodType>(key: K, body: S) =>
  z.object({ [key]: body } as { [k in K]: S }).strict();

export const RevisionCreate = z.object({}).strict();
export const RevisionApply = z
  .object({ state: z.literal('apply'), 'auto-prompt': z.object({ ays: z.literal('ays_yes') }).strict() })
  .strict();
export const RevisionSave = z
  .object({ state: z.literal('save'), 'auto-prompt': z.object({ ays: z.literal('ays_yes') }).strict() })
  .strict();

export const PowerCycle = action('@power-cycle', start({ force: z.literal(true) }));
export const FactoryReset = action('@reset', start({ force: z.literal(true) }));
export const ImageInstall = action('@install', start({ force: z.literal(true), 'image-file': z.string() }));
export const ImageFetch = action('@fetch', start({ 'remote-url': z.url({ protocol: /^https?$/ }) }));
export const ImageUninstall = action('@uninstall', start({ force: z.literal(true) }));
export const FirmwareInstall = action('@install', start({ force: z.boolean() }));
export const CaImport = action('@import', z.union([start({ uri: z.string() }), start({ data: z.string() })]));
export const CertificateImport = action(
  '@import',
  z.union([start({ 'uri-public-key': z.string(), 'uri-private-key': z.string() }), start({ data: z.string() })]),
);

/** Parses `body` or says why not, in NVUE's words. */
export function parseBody<T>(schema: z.ZodType<T>, body: unknown): T | string {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  return parsed.error.issues.map((i) => `${i.path.length ? i.path.join('.') : 'body'}: ${i.message}`).join('; ');
}

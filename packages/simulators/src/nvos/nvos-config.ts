import { z } from 'zod';
import type { ConfigChange } from './revisions.js';

/** The part of an NVOS configuration the control plane changes through revisions. */
export interface NvosConfig {
  users: Record<string, { password: string; role: string }>;
  /** NVUE REST API: server certificate id and the CA that client certificates must chain to (mTLS). */
  api: { certificate?: string; mtlsCa?: string };
  gnmi: { state: 'enabled' | 'disabled'; certificate?: string; mtlsCa?: string };
}

/**
 * What a factory reset leaves: admin/admin and nothing else (docs/reference/rms-behaviours.md#switch-factory-reset).
 */
export function defaultConfig(username = 'admin', password = 'admin'): NvosConfig {
  return { users: { [username]: { password, role: 'system-admin' } }, api: {}, gnmi: { state: 'disabled' } };
}

const id = z.string().regex(/^[A-Za-z0-9._-]+$/, 'must be an identifier');
// NVUE takes the new password base64-encoded (docs/reference/rms-behaviours.md#nvue-revisions); anything that does not
// round-trip is refused.
const base64 = z
  .string()
  .min(1)
  .refine((s) => Buffer.from(s, 'base64').toString('base64') === s, 'must be base64');

interface Setting {
  pattern: RegExp;
  body: z.ZodType;
  apply(config: NvosConfig, match: RegExpExecArray, body: never): void;
}

const setting = <T>(
  pattern: RegExp,
  body: z.ZodType<T>,
  apply: (config: NvosConfig, match: RegExpExecArray, body: T) => void,
): Setting => ({
  pattern,
  body,
  apply,
});

/** The config paths a revision may stage, each with the exact body it accepts. */
const settings: Setting[] = [
  setting(/^system\/aaa\/user\/([A-Za-z0-9._-]+)$/, z.object({ password: base64 }).strict(), (c, m, b) => {
    const user = m[1]!;
    c.users[user] = {
      role: c.users[user]?.role ?? 'system-admin',
      password: Buffer.from(b.password, 'base64').toString('utf8'),
    };
  }),
  setting(/^system\/api$/, z.object({ certificate: id }).strict(), (c, _m, b) => {
    c.api.certificate = b.certificate;
  }),
  setting(/^system\/api\/mtls$/, z.object({ 'ca-certificate': id }).strict(), (c, _m, b) => {
    c.api.mtlsCa = b['ca-certificate'];
  }),
  setting(
    /^system\/gnmi-server$/,
    z.union([z.object({ state: z.enum(['enabled', 'disabled']) }).strict(), z.object({ certificate: id }).strict()]),
    (c, _m, b) => {
      if ('state' in b) c.gnmi.state = b.state;
      else c.gnmi.certificate = b.certificate;
    },
  ),
  setting(/^system\/gnmi-server\/mtls$/, z.object({ 'ca-certificate': id }).strict(), (c, _m, b) => {
    c.gnmi.mtlsCa = b['ca-certificate'];
  }),
];

/** Checks a PATCH against the settings table; returns why it is refused, or undefined. */
export function refuseChange(change: ConfigChange): string | undefined {
  const s = settings.find((x) => x.pattern.test(change.path));
  if (!s) return `${change.path} cannot be configured`;
  const parsed = s.body.safeParse(change.body);
  return parsed.success
    ? undefined
    : parsed.error.issues.map((i) => `${[change.path, ...i.path].join('.')}: ${i.message}`).join('; ');
}

/** The configuration after `changes` (already validated by refuseChange). */
export function applyChanges(config: NvosConfig, changes: ConfigChange[]): NvosConfig {
  const next = structuredClone(config);
  for (const change of changes) {
    const s = settings.find((x) => x.pattern.test(change.path))!;
    s.apply(next, s.pattern.exec(change.path)!, change.body as never);
  }
  return next;
}

/** Certificate ids the configuration names that are not installed; NVUE refuses to apply those. */
export function missingCertificates(
  c: NvosConfig,
  certificates: ReadonlySet<string>,
  caCertificates: ReadonlySet<string>,
): string[] {
  const certs = [c.api.certificate, c.gnmi.certificate].filter(
    (x): x is string => x !== undefined && x !== 'self-signed' && !certificates.has(x),
  );
  const cas = [c.api.mtlsCa, c.gnmi.mtlsCa].filter((x): x is string => x !== undefined && !caCertificates.has(x));
  return [...certs, ...cas];
}

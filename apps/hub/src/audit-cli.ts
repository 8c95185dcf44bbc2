import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import {
  AuditChainVerifier,
  connectDb,
  verifyAuditChain,
  type AuditChainRecord,
  type AuditVerification,
} from '@fleet/db';
import { loadHubConfigOrExit, parseCliArgs } from './cli-args.js';

// Verifies the audit log's hash chain (docs/security.md, "Audit log"); a sibling of admin-cli.
const usage = `usage: audit-cli verify-audit --config <hub.json> [--page-size <n>]
       audit-cli verify-audit --file <export.ndjson> [--anchor <hash>]

Walks the audit log's hash chain in the hub's database (its database.url; in pages, then against the chain's
head), or in a file GET /v1/audit/export wrote (its first row chains to --anchor when given, e.g. the hash an
earlier verified export ended with), and prints the result as JSON. The exit code is 1 when a row is broken (the
output names the first: brokenAt, problem), 2 for bad arguments. Example:
  node --import tsx apps/hub/src/audit-cli.ts verify-audit --config deploy/config/hub.example.json`;

/** Checks the lines of an export in order; stops at the first broken one. */
async function verifyFile(file: string, anchor: string | undefined): Promise<AuditVerification> {
  const v = new AuditChainVerifier(anchor);
  let n = 0;
  const broken = (brokenAt: number | undefined, problem: string): AuditVerification => ({
    ok: false,
    rows: v.count,
    lastId: v.last?.id ?? null,
    lastHash: v.last?.hash ?? anchor ?? '',
    ...(brokenAt !== undefined ? { brokenAt } : {}),
    problem,
  });
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    n++;
    if (!line.trim()) continue;
    let record: AuditChainRecord;
    try {
      record = JSON.parse(line) as AuditChainRecord;
    } catch {
      return broken(undefined, `line ${n} is not JSON`);
    }
    const problem = v.check(record);
    if (problem) return broken(record.id, problem);
  }
  return { ok: true, rows: v.count, lastId: v.last?.id ?? null, lastHash: v.last?.hash ?? anchor ?? '' };
}

async function verifyDatabase(configPath: string, pageSizeArg: string | undefined): Promise<AuditVerification> {
  const pageSize = Number(pageSizeArg ?? 1000);
  if (!Number.isInteger(pageSize) || pageSize < 1) {
    console.error('--page-size must be a positive integer');
    process.exit(2);
  }
  const config = loadHubConfigOrExit(() => configPath, usage);
  const handle = connectDb(config.database.url, 1);
  try {
    return await verifyAuditChain(handle.db, pageSize);
  } finally {
    await handle.close();
  }
}

const { values, positionals } = parseCliArgs(
  { config: { type: 'string' }, file: { type: 'string' }, anchor: { type: 'string' }, 'page-size': { type: 'string' } },
  usage,
);
if (positionals[0] !== 'verify-audit' || (!values.file && !values.config)) {
  console.error(usage);
  process.exit(2);
}
const result = values.file
  ? await verifyFile(values.file, values.anchor)
  : await verifyDatabase(values.config!, values['page-size']);
console.log(JSON.stringify(result));
process.exit(result.ok ? 0 : 1);

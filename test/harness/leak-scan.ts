import { execFile } from 'node:child_process';
import { appendFileSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import type { Payload } from '@temporalio/client';
import type { EncryptionCodec } from '@fleet/temporal/codec';
import { encryptedEncoding } from '@fleet/temporal/codec';

const run = promisify(execFile);

/** A value that must not appear, by name (findings name it, never print it). */
export interface Needle {
  name: string;
  value: string;
}

export interface LeakScanInput {
  temporalAddress: string;
  /** With payload encryption on: payloads are decoded with it before the secret scan. */
  codec?: EncryptionCodec;
  databaseUrl: string;
  /** Every log file of the run. */
  logFiles: string[];
  /** Passwords and tokens: searched in decoded histories, the database dump and every log. */
  secrets: Needle[];
  /**
   * Values only the codec may see (device addresses): searched in the histories as the server stores them, payloads
   * and failure texts alike; search attributes are left out, since Temporal must index them in clear.
   */
  encryptedOnly: Needle[];
}

export interface LeakScanReport {
  histories: number;
  events: number;
  payloads: number;
  historyBytes: number;
  pgDumpBytes: number;
  logBytes: number;
  secretsChecked: number;
  findings: string[];
}

/** Something that looks like a payload in a raw history: Temporal's Payload message. */
function isPayload(value: object): value is Payload {
  return 'data' in value && 'metadata' in value && (value as Payload).data instanceof Uint8Array;
}

/** Every payload (with where it sits) and every string of a raw history, search attributes left out. */
function walk(value: unknown, payloads: Payload[], paths: string[], strings: string[], path = ''): void {
  if (typeof value === 'string') strings.push(value);
  if (!value || typeof value !== 'object' || value instanceof Uint8Array) return;
  if (isPayload(value)) {
    payloads.push(value);
    paths.push(path);
    return;
  }
  for (const [k, v] of Object.entries(value))
    if (k !== 'searchAttributes') walk(v, payloads, paths, strings, /^\d+$/.test(k) ? path : `${path}.${k}`);
}

/**
 * What the SDK's core writes into markers past the codec: a `patched()` marker's id (a name from the workflow code) and
 * a local activity marker's bookkeeping (its sequence number, type, attempt, times; its result is a payload the codec
 * seals like any other). The address search below still reads them.
 */
const isCoreMarkerData = (path: string) =>
  /\.markerRecordedEventAttributes\.details\.(patch-data|data)\.payloads$/.test(path);

const encodingOf = (p: Payload) => Buffer.from(p.metadata?.['encoding'] ?? []).toString();

/**
 * The histories of every workflow on the server: as stored (for `encryptedOnly`) and decoded (for `secrets`).
 * Payload bytes are searched as they are; JSON payloads hold strings verbatim.
 */
async function scanHistories(input: LeakScanInput, report: LeakScanReport): Promise<void> {
  const connection = await Connection.connect({ address: input.temporalAddress, connectTimeout: 5_000 });
  try {
    // Listing decodes memos: with the codec on, the client needs it.
    const client = new Client({
      connection,
      ...(input.codec ? { dataConverter: { payloadCodecs: [input.codec] } } : {}),
    });
    for await (const wf of client.workflow.list()) {
      const history = await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
      const payloads: Payload[] = [];
      const paths: string[] = [];
      const strings: string[] = [];
      walk(history, payloads, paths, strings);
      report.histories += 1;
      report.events += history.events?.length ?? 0;
      report.payloads += payloads.length;
      const where = `history of ${wf.workflowId} (${wf.type})`;
      const stored = Buffer.concat([...payloads.map((p) => Buffer.from(p.data!)), Buffer.from(strings.join('\n'))]);
      report.historyBytes += stored.length;
      if (input.codec) {
        const clear = [
          ...new Set(
            paths.filter((path, i) => encodingOf(payloads[i]!) !== encryptedEncoding && !isCoreMarkerData(path)),
          ),
        ];
        if (clear.length > 0) report.findings.push(`payloads in clear in the ${where}: ${clear.join(', ')}`);
        for (const n of input.encryptedOnly)
          if (stored.includes(n.value)) report.findings.push(`${n.name} in clear in the ${where}`);
      }
      const decoded = input.codec ? await input.codec.decode(payloads) : payloads;
      const text = Buffer.concat([...decoded.map((p) => Buffer.from(p.data ?? [])), Buffer.from(strings.join('\n'))]);
      for (const n of input.secrets) if (text.includes(n.value)) report.findings.push(`${n.name} in the ${where}`);
    }
  } finally {
    await connection.close();
  }
}

async function scanDatabase(input: LeakScanInput, report: LeakScanReport): Promise<void> {
  const { stdout } = await run('pg_dump', ['--data-only', '--no-owner', input.databaseUrl], {
    maxBuffer: 1 << 30,
    encoding: 'buffer',
  });
  report.pgDumpBytes = stdout.length;
  for (const n of input.secrets) if (stdout.includes(n.value)) report.findings.push(`${n.name} in the database dump`);
}

function scanLogs(input: LeakScanInput, report: LeakScanReport): void {
  for (const file of input.logFiles) {
    const bytes = readFileSync(file);
    report.logBytes += bytes.length;
    for (const n of input.secrets) if (bytes.includes(n.value)) report.findings.push(`${n.name} in ${file}`);
  }
}

/** Every `*.log` under `dir`. */
export function logFilesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((name) => join(dir, name))
    .filter((path) => path.endsWith('.log') && statSync(path).isFile());
}

/**
 * After a run: no password or token in Temporal's histories (decoded), the database or any log, and with payload
 * encryption nothing the codec hides readable in the histories as stored. Needles shorter than 12 characters are
 * left out (a factory default such as `admin` is no secret and matches everywhere).
 */
export async function scanForLeaks(input: LeakScanInput): Promise<LeakScanReport> {
  const keep = (ns: Needle[]) => ns.filter((n) => n.value.length >= 12);
  const scan = { ...input, secrets: keep(input.secrets), encryptedOnly: keep(input.encryptedOnly) };
  const report: LeakScanReport = {
    histories: 0,
    events: 0,
    payloads: 0,
    historyBytes: 0,
    pgDumpBytes: 0,
    logBytes: 0,
    secretsChecked: scan.secrets.length,
    findings: [],
  };
  await Promise.all([scanHistories(scan, report), scanDatabase(scan, report)]);
  scanLogs(scan, report);
  return report;
}

/** Adds a stack's final scan to the run's report (FLEET_LEAK_SCAN_REPORT, which tools/run-tests.ts sums up). */
export function recordLeakScan(report: LeakScanReport): void {
  const file = process.env['FLEET_LEAK_SCAN_REPORT'];
  if (file) appendFileSync(file, `${JSON.stringify(report)}\n`);
}

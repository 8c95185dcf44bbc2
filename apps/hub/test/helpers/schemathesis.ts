import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Schemathesis (PyPI, pinned in tools/requirements.txt), shared by the fuzz test and `pnpm bench security`.

const st = fileURLToPath(new URL('../../../../.tools/venv/bin/st', import.meta.url));
export const checks = [
  'not_a_server_error',
  'status_code_conformance',
  'content_type_conformance',
  'response_headers_conformance',
  'response_schema_conformance',
  'unsupported_method',
];

export interface RunResult {
  code: number | null;
  output: string;
  requests: number;
  /** Answers with a 5xx status among them. */
  serverErrors: number;
}

/** One bounded `st run` with a token; the request count comes from its NDJSON event stream. */
export async function schemathesis(
  openapiUrl: string,
  token: string,
  reportDir: string,
  name: string,
  filters: string[] = [],
  maxExamples = 8,
): Promise<RunResult> {
  const events = join(reportDir, `${name}.ndjson`);
  const args = [
    'run',
    openapiUrl,
    // The event stream never ends on its own: each case would wait out the request timeout. events.test.ts covers it.
    '--exclude-path',
    '/v1/events',
    ...filters,
    '--header',
    `Authorization: Bearer ${token}`,
    '--checks',
    checks.join(','),
    '--phases',
    'examples,coverage,fuzzing',
    '--max-examples',
    String(maxExamples),
    '--seed',
    '11',
    '--generation-database',
    'none',
    // One worker: Hypothesis describing strategies from several threads trips a CPython 3.11 ast.parse race.
    '--workers',
    '1',
    '--request-timeout',
    '10',
    '--no-color',
    '--report',
    'ndjson',
    '--report-ndjson-path',
    events,
  ];
  const child = spawn(st, args, { cwd: reportDir, env: { ...process.env, PYTHONUNBUFFERED: '1' } });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('exit', resolve);
    child.once('error', (err) =>
      reject(new Error(`cannot run ${st} (bash tools/install.sh installs it): ${err.message}`)),
    );
  });
  let requests = 0;
  let serverErrors = 0;
  type Interaction = { response?: { status_code?: number } | null };
  for (const line of (await readFile(events, 'utf8').catch(() => '')).split('\n')) {
    // Each ScenarioFinished event records the request and response of every case it ran.
    const finished = line.startsWith('{"ScenarioFinished"')
      ? (JSON.parse(line) as { ScenarioFinished: { recorder: { interactions?: Record<string, Interaction> } } })
          .ScenarioFinished
      : undefined;
    for (const interaction of Object.values(finished?.recorder.interactions ?? {})) {
      requests++;
      if ((interaction.response?.status_code ?? 0) >= 500) serverErrors++;
    }
  }
  return { code, output, requests, serverErrors };
}

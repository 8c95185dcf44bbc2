import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { prepareTemplate } from '@fleet/db/testing';
import { buildWorkflowBundle } from '@fleet/satellite';
import pg from 'pg';

// Runs every *.test.ts with node's test runner against the real Postgres and real
// Temporal dev servers that the tests start. Usage: pnpm test [file-filter ...]
const root = fileURLToPath(new URL('..', import.meta.url));
const databaseUrl = process.env['FLEET_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const templateDb = `fleet_tpl_${process.pid}`;
const workflowBundle = join(root, '.run', `workflow-bundle-${process.pid}.js`);
const leakScanReport = join(root, '.run', `leak-scan-${process.pid}.jsonl`);

function findTests(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) findTests(path, out);
    else if (name.endsWith('.test.ts')) out.push(relative(root, path));
  }
  return out;
}

const filters = process.argv.slice(2);
const files = ['packages', 'apps', 'workflows', 'tools', 'test']
  .flatMap((d) => findTests(join(root, d)))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error(`no test files match ${filters.join(' ')}`);
  process.exit(1);
}

// Files that run processes from the build (a Stack in mode 'dist') or check its output (they import
// tools/lib/build-entries), or every file with FLEET_PROCESS_MODE=dist, get a fresh build first (about 3 s).
const needsBuild =
  process.env['FLEET_PROCESS_MODE'] === 'dist' ||
  files.some((f) => /\bmode: 'dist'|lib\/build-entries\.js'/.test(readFileSync(join(root, f), 'utf8')));
if (
  needsBuild &&
  spawnSync(process.execPath, ['--import', 'tsx', 'tools/build.ts'], { cwd: root, stdio: 'inherit' }).status
)
  process.exit(1);
await prepareTemplate(databaseUrl, templateDb);
await buildWorkflowBundle(workflowBundle);
const code = await new Promise<number>((resolve) => {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--test', '--test-reporter=spec', '--test-concurrency=2', ...files],
    {
      cwd: root,
      stdio: 'inherit',
      env: {
        ...process.env,
        FLEET_TEST_DATABASE_URL: databaseUrl,
        FLEET_TEST_TEMPLATE_DB: templateDb,
        FLEET_TEST_WORKFLOW_BUNDLE: workflowBundle,
        FLEET_LEAK_SCAN_REPORT: leakScanReport,
      },
    },
  );
  child.once('exit', (c) => resolve(c ?? 1));
});
const admin = new pg.Client({ connectionString: databaseUrl });
await admin.connect();
await admin.query(`drop database if exists "${templateDb}" with (force)`);
await admin.end();
rmSync(workflowBundle, { force: true });
const leaks = summariseLeakScans(leakScanReport);
rmSync(leakScanReport, { force: true });
process.exit(code || (leaks > 0 ? 1 : 0));

/**
 * Every stack's leak scan at its stop (test/harness/leak-scan.ts), summed up: what was searched and what was found.
 * A finding has failed its test already; it fails the run too, so that it cannot hide in a skipped file's output.
 */
function summariseLeakScans(file: string): number {
  if (!existsSync(file)) return 0;
  const scans = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, number> & { findings: string[] });
  const sum = (k: string) => scans.reduce((n, r) => n + r[k]!, 0);
  const mib = (k: string) => (sum(k) / 2 ** 20).toFixed(1);
  const findings = scans.flatMap((r) => r.findings);
  console.log(
    `leak scan: ${scans.length} stacks; ${sum('histories')} Temporal histories (${sum('events')} events, ` +
      `${sum('payloads')} payloads, decoded), ${mib('pgDumpBytes')} MiB of pg_dump, ${mib('logBytes')} MiB of logs; ` +
      `${findings.length} findings${findings.length ? `:\n  ${findings.join('\n  ')}` : ''}`,
  );
  return findings.length;
}

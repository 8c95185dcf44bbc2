import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { repoRoot } from '../tools/lib/processes.js';

/**
 * Every command a user runs answers --help with its usage on stdout and exit 0, and a wrong argument with the usage,
 * never a stack trace.
 */
const run = (cmd: string, args: string[]) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(cmd, args, {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, FLEET_CONFIG: '' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
const node = (entry: string, ...args: string[]) => run(process.execPath, ['--import', 'tsx', entry, ...args]);
const stackTrace = /^\s+at /m;

describe('--help on every command', () => {
  const entries = [
    'apps/hub/src/main.ts',
    'apps/hub/src/admin-cli.ts',
    'apps/hub/src/audit-cli.ts',
    'apps/netbox-agent/src/main.ts',
    'apps/workflow-agent/src/main.ts',
    'apps/satellite/src/main.ts',
    'packages/simulators/src/main.ts',
    'tools/dev-stack.ts',
    'tools/build.ts',
    'tools/fleetgen/main.ts',
    'packages/client/scripts/generate.ts',
    'apps/cli/src/main.ts',
  ];
  for (const entry of entries) {
    it(`${entry} --help prints its usage and exits 0`, { timeout: 60_000 }, async () => {
      const r = await node(entry, '--help');
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^usage: /);
      assert.doesNotMatch(r.stderr, stackTrace);
    });
  }

  const scripts = [
    'tools/up.sh',
    'tools/down.sh',
    'tools/install.sh',
    'tools/test.sh',
    'tools/redfish-conformance.sh',
    'tools/netbox/install.sh',
    'tools/netbox/start.sh',
    'tools/netbox/stop.sh',
  ];
  for (const script of scripts) {
    it(`${script} --help prints its usage and exits 0 without doing anything`, { timeout: 30_000 }, async () => {
      const r = await run('bash', [script, '--help']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /Usage: /);
      assert.equal(r.stderr, '');
    });
  }

  it(
    'admin-cli with an unknown option or no config prints the usage, exit 2, no stack trace',
    { timeout: 60_000 },
    async () => {
      for (const args of [
        ['create-token', '--bogus'],
        ['create-token', '--name', 'ops', '--role', 'viewer'],
      ]) {
        const r = await node('apps/hub/src/admin-cli.ts', ...args);
        assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
        assert.match(r.stderr, /usage: admin-cli create-token/);
        assert.doesNotMatch(r.stderr, stackTrace);
      }
    },
  );
});

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildFwpkg } from '@fleet/fwpkg';
import { profilePackageSpec, profileParts } from '@fleet/simulators';
import { freePort } from '@fleet/temporal';
import { parse } from 'yaml';
import { manifestFor, setFaults } from '../../../test/harness/firmware.js';
import { Stack } from '../../../test/harness/stack.js';
import { repoRoot } from '../../../tools/lib/processes.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface JobJson {
  id: string;
  kind: string;
  state: string;
  error: { code: string; message: string } | null;
}

/**
 * fleetctl as an operator runs it: the bin as a child process, its own config file, the token in an environment
 * variable, against the whole stack (hub, agent, Temporal, satellite, simulated BMCs).
 */
describe('fleetctl against the full stack', () => {
  const stack = new Stack({
    bmcs: 4,
    timeScale: 0.005,
    power: { heartbeatTimeoutS: 3, maximumAttempts: 2 },
    firmware: { taskPollS: 0.2, pushDelayS: 0.2, acStabilizeS: 0.2, powerStateTimeoutS: 30, bmcRecoveryS: 60 },
  });
  const dir = mkdtempSync(join(tmpdir(), 'fleetctl-e2e-'));
  const env: NodeJS.ProcessEnv = { FLEET_CONFIG: join(dir, 'config.yaml') };
  const device = (bmc: string) => stack.deviceIds.get(bmc)!;
  /** A port nothing listens on: the hub of the `down` context. */
  let deadHub = '';

  const fleetctl = (...args: string[]) =>
    new Promise<Run>((resolve) => {
      const child = spawn(process.execPath, [join(repoRoot, 'apps/cli/bin/fleetctl.mjs'), ...args], {
        cwd: dir,
        env: { ...process.env, FLEET_CONTEXT: '', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.once('close', (code) => resolve({ code, stdout, stderr }));
    });
  const ok = async (...args: string[]) => {
    const r = await fleetctl(...args);
    assert.equal(r.code, 0, `fleetctl ${args.join(' ')}: exit ${r.code}\n${r.stderr}`);
    return r;
  };
  const json = async <T>(...args: string[]) => JSON.parse((await ok(...args, '-o', 'json')).stdout) as T;

  before(
    async () => {
      await stack.start();
      deadHub = `http://127.0.0.1:${await freePort()}`;
      env['FLEET_TEST_OPERATOR'] = stack.tokens.operator;
      env['FLEET_TEST_VIEWER'] = stack.tokens.viewer;
      await manifestFor(stack, 'gb200-compute', 'compute_gb200_nvidia', '25.10.0', { isDefault: true });
    },
    { timeout: 180_000 },
  );
  after(
    async () => {
      await stack.stop();
      rmSync(dir, { recursive: true, force: true });
    },
    { timeout: 60_000 },
  );

  it('sets up contexts and logs in, showing the role and never the token', { timeout: 60_000 }, async () => {
    await ok('config', 'set-context', 'ops', '--hub', stack.hubUrl, '--token-env', 'FLEET_TEST_OPERATOR');
    writeFileSync(join(dir, 'viewer.token'), `${stack.tokens.viewer}\n`);
    await ok('config', 'set-context', 'viewer', '--hub', stack.hubUrl, '--token-file', join(dir, 'viewer.token'));
    await ok('config', 'set-context', 'down', '--hub', deadHub, '--token-env', 'FLEET_TEST_OPERATOR');
    const contexts = await ok('config', 'get-contexts');
    assert.match(contexts.stdout, /^\*\s+ops\s/m, 'the first context became current');
    assert.ok(!contexts.stdout.includes(stack.tokens.operator) && !contexts.stdout.includes(stack.tokens.viewer));

    const login = await ok('login');
    assert.match(login.stdout, new RegExp(`logged in to ${stack.hubUrl} as test-operator \\(operator\\)`));
    const viewer = await json<{ role: string }>('--context', 'viewer', 'login');
    assert.equal(viewer.role, 'viewer');
  });

  it('get lists with the API filters; -o json and yaml parse', { timeout: 60_000 }, async () => {
    const devices = await json<{ items: { id: string; name: string; site_id: string }[] }>(
      'get',
      'devices',
      '--site',
      stack.siteId,
      '--page-size',
      '3',
    );
    assert.deepEqual(devices.items.map((d) => d.id).sort(), [...stack.deviceIds.values()].sort());
    const limited = await ok('get', 'devices', '--limit', '2', '-o', 'id');
    assert.equal(limited.stdout.trim().split('\n').length, 2);
    const sites = parse((await ok('get', 'sites', '-o', 'yaml')).stdout) as { items: { id: string }[] };
    assert.deepEqual(
      sites.items.map((s) => s.id),
      [stack.siteId],
    );
    // Racks and sites come whole (no paging parameters); the harness's BMCs sit in no rack.
    const racks = await json<{ items: unknown[] }>('get', 'racks', '--site', stack.siteId);
    assert.deepEqual(racks.items, []);
    const pageSize = await fleetctl('get', 'racks', '--page-size', '10');
    assert.equal(pageSize.code, 2, 'racks are not paged, so --page-size is unknown there');
    const table = await ok('get', 'devices', '-o', 'wide');
    assert.match(table.stdout, /^ID\s+NAME\s+SITE\s+ROLE\s+NODE TYPE\s+POWER\s+FIRMWARE\s+RACK/);
    assert.equal(table.stdout.trim().split('\n').length, 5);
    const one = await json<{ id: string }>('get', 'device', device('bmc-0001'));
    assert.equal(one.id, device('bmc-0001'));
    assert.equal((await json<{ items: unknown[] }>('get', 'manifests', '--default')).items.length, 1);
    assert.equal((await json<{ items: unknown[] }>('get', 'issues')).items.length, 0);
  });

  it('power cycle follows the job to success (exit 0) and describe shows it', { timeout: 90_000 }, async () => {
    const id = (await ok('power', 'cycle', 'device', device('bmc-0001'), '-o', 'id')).stdout.trim();
    const wait = await ok('job', 'wait', id);
    assert.match(wait.stderr, new RegExp(`job ${id} \\(device.power\\) succeeded`));
    assert.match(wait.stdout, /succeeded/);
    const described = await ok('describe', 'device', device('bmc-0001'));
    assert.match(described.stdout, /^Power:\s+On/m);
    assert.match(described.stdout, new RegExp(`${id}\\s+device.power\\s+succeeded`));
    const logs = await ok('job', 'logs', id);
    assert.match(logs.stdout, new RegExp(`job ${id} device.power on device/${device('bmc-0001')}`));
    const reset = await ok('bmc-reset', device('bmc-0001'), '--wait', '-o', 'json');
    assert.equal((JSON.parse(reset.stdout) as JobJson).kind, 'device.bmc_reset');
  });

  it('a job that fails exits 1 with its error', { timeout: 90_000 }, async () => {
    await setFaults(stack, 'bmc-0002', { errorRate: 1, errorStatus: 500 });
    try {
      const r = await fleetctl('power', 'on', 'device', device('bmc-0002'), '--wait', '-o', 'json');
      assert.equal(r.code, 1, r.stderr);
      const job = JSON.parse(r.stdout) as JobJson;
      assert.equal(job.state, 'failed');
      assert.match(r.stderr, new RegExp(`error: job ${job.id} failed: ${job.error!.code}`));
    } finally {
      await setFaults(stack, 'bmc-0002', {});
    }
  });

  it('--watch prints the job as it changes and ends when it ends', { timeout: 60_000 }, async () => {
    const id = (await ok('power', 'off', 'device', device('bmc-0003'), '-o', 'id')).stdout.trim();
    const watched = await ok('get', 'job', id, '--watch', '-o', 'jsonl');
    const versions = watched.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as JobJson);
    assert.equal(versions.at(-1)!.state, 'succeeded');
    assert.ok(versions.every((v) => v.id === id));
  });

  it(
    'refusals exit 3 with the code, message and fields; usage errors 2; an unreachable hub 4',
    { timeout: 60_000 },
    async () => {
      const missing = randomUUID();
      const notFound = await fleetctl('power', 'on', 'device', missing);
      assert.equal(notFound.code, 3);
      assert.match(notFound.stderr, new RegExp(`NOT_FOUND \\(HTTP 404\\): .*${missing}`));
      const badFilter = await fleetctl('get', 'jobs', '--state', 'sideways');
      assert.equal(badFilter.code, 3);
      assert.match(badFilter.stderr, /INVALID_ARGUMENT \(HTTP 400\)/);
      assert.match(badFilter.stderr, /^\s+query\.state[.\d]*: /m);
      const denied = await fleetctl('--context', 'viewer', 'power', 'on', 'device', device('bmc-0004'));
      assert.equal(denied.code, 3);
      assert.match(denied.stderr, /PERMISSION_DENIED/);
      const coldReboot = await fleetctl('cold-reboot', 'rack', missing, '--discharge-floor', '5');
      assert.equal(coldReboot.code, 3, coldReboot.stderr);

      for (const args of [
        ['power', 'sideways', 'device', device('bmc-0004')],
        ['get', 'devices', '--limit', 'many'],
        ['get', 'devices', '-o', 'xml'],
        ['describe', 'planet', 'earth'],
        ['frobnicate'],
      ]) {
        const r = await fleetctl(...args);
        assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
        assert.match(r.stderr, /error: /);
        assert.doesNotMatch(r.stderr, /^\s+at /m, 'no stack trace');
      }

      const down = await fleetctl('--context', 'down', 'get', 'sites');
      assert.equal(down.code, 4);
      assert.equal(down.stderr, `error: hub unreachable at ${deadHub}: ECONNREFUSED\n`);
    },
  );

  it(
    'uploads a package (streamed), shows parser errors, reports compliance and updates a device',
    { timeout: 120_000 },
    async () => {
      const part = profileParts('gb200-compute')[0]!;
      const file = join(dir, 'bmc-25.11.0.fwpkg');
      writeFileSync(file, buildFwpkg(profilePackageSpec('gb200-compute', part, '25.11.0')));
      const pkg = await json<{ id: string; file_name: string }>('firmware', 'upload', file);
      assert.equal(pkg.file_name, 'bmc-25.11.0.fwpkg');
      assert.equal(
        (await json<{ items: { id: string }[] }>('get', 'packages', '--file-name', pkg.file_name)).items[0]!.id,
        pkg.id,
      );
      const corrupt = join(dir, 'corrupt.fwpkg');
      writeFileSync(corrupt, Buffer.alloc(4096, 7));
      const refused = await fleetctl('firmware', 'upload', corrupt);
      assert.equal(refused.code, 3);
      assert.match(refused.stderr, /INVALID_ARGUMENT \(HTTP 400\)/);

      const nvos = await fleetctl('nvos', 'install', device('bmc-0004'), '--package', pkg.id);
      assert.equal(nvos.code, 3, 'a compute tray takes no NVOS image');

      const compliance = await json<{ items: { device_id: string; status: string }[] }>('firmware', 'compliance');
      assert.equal(compliance.items.length, 4);
      const summary = await json<{ total: number }>('firmware', 'compliance', '--summary');
      assert.equal(summary.total, 4);

      const update = await ok('firmware', 'update', 'device', device('bmc-0004'), '--wait');
      assert.match(update.stderr, /device\.firmware_update\) succeeded/);
      const described = await ok('describe', 'device', device('bmc-0004'));
      assert.match(described.stdout, /status: compliant/);
    },
  );

  it(
    'plans a campaign (dry run), starts, pauses, resumes and cancels it; waiting on it exits 1',
    { timeout: 120_000 },
    async () => {
      const plan = await ok('campaign', 'create', '--name', 'cli', '--site', stack.siteId, '--dry-run');
      assert.match(plan.stdout, /^Devices:\s+\d/m);
      assert.match(plan.stdout, /Nothing was started \(dry run\)/);
      assert.equal((await json<{ items: unknown[] }>('get', 'campaigns')).items.length, 0);

      const args = ['campaign', 'create', '--name', 'cli', '--site', stack.siteId, '--canary-size', '1'];
      const id = (await ok(...args, '--idempotency-key', 'cli-e2e-campaign', '-o', 'id')).stdout.trim();
      // The same key again is the same campaign, not a second one.
      assert.equal((await ok(...args, '--idempotency-key', 'cli-e2e-campaign', '-o', 'id')).stdout.trim(), id);
      const gate = await json<JobJson>('campaign', 'wait', id, '--for', 'approval');
      assert.equal(gate.state, 'running');
      assert.match((await fleetctl('campaign', 'wait', id, '--for', 'approval')).stderr, /campaign approve/);
      for (const action of ['pause', 'resume', 'approve', 'cancel']) await ok('campaign', action, id);
      const wait = await fleetctl('job', 'wait', id);
      assert.equal(wait.code, 1, wait.stderr);
      assert.match(wait.stderr, new RegExp(`job ${id} cancelled`));
      const described = await ok('describe', 'campaign', id);
      assert.match(described.stdout, /^State:\s+cancelled/m);
    },
  );

  it(
    'day-2: quarantines and releases a device, ships it on an RMA case and takes it back; lists breaches and events',
    { timeout: 180_000 },
    async () => {
      const tray = device('bmc-0003');
      const lifecycle = async () =>
        (await json<{ lifecycle: { state: string } }>('get', 'device', tray)).lifecycle.state;
      const never = await fleetctl('device', 'health', tray);
      assert.equal(never.code, 3, 'the observer is off in this stack: no reading yet');
      assert.match(never.stderr, /NOT_FOUND \(HTTP 404\)/);

      const held = await json<JobJson>('device', 'quarantine', tray, '--reason', 'cli e2e: hold', '--wait');
      assert.deepEqual([held.kind, held.state], ['device.quarantine', 'succeeded']);
      assert.equal(await lifecycle(), 'quarantined');
      const again = await fleetctl('device', 'quarantine', tray, '--reason', 'twice');
      assert.equal(again.code, 3);
      assert.match(again.stderr, /CONFLICT \(HTTP 409\): .*already quarantined/);
      const released = await json<JobJson>('device', 'release', tray, '--reason', 'cli e2e: healthy', '--wait');
      assert.deepEqual([released.kind, released.state], ['device.release', 'succeeded']);
      assert.equal(await lifecycle(), 'discovered');

      await ok('device', 'quarantine', tray, '--reason', 'cli e2e: GPU_2 dead', '--wait');
      const opened = await json<{ id: string; state: string }>(
        'rma',
        'create',
        tray,
        '--part',
        'GPU_2',
        '--reason',
        'Xid 79',
      );
      assert.equal(opened.state, 'open');
      const listed = await json<{ items: { id: string }[] }>('rma', 'list', '--device', tray, '--state', 'open');
      assert.deepEqual(
        listed.items.map((c) => c.id),
        [opened.id],
      );
      const ship = await json<JobJson>(
        'rma',
        'update',
        opened.id,
        '--state',
        'shipped',
        '--reason',
        'picked up',
        '--vendor-case',
        'NV-1',
        '--wait',
      );
      assert.deepEqual([ship.kind, ship.state], ['device.rma_ship', 'succeeded']);
      assert.equal(await lifecycle(), 'rma');
      const shown = await ok('rma', 'show', opened.id);
      assert.match(shown.stdout, /^State:\s+shipped$/m);
      assert.match(shown.stdout, /^Vendor case:\s+NV-1$/m);
      assert.match(shown.stdout, /open -> shipped\s+test-operator\s+[0-9a-f-]{36}\s+picked up$/m);
      await ok('rma', 'update', opened.id, '--state', 'replaced', '--reason', 'new GPU fitted', '--wait');
      assert.equal(await lifecycle(), 'discovered');
      const bad = await fleetctl('rma', 'update', opened.id, '--state', 'revalidating', '--reason', 'x');
      assert.equal(bad.code, 3, 'the workflow agent moves a case to revalidating, not an operator');

      const breaches = await json<{ items: unknown[] }>('sla', 'breaches', '--object', tray);
      assert.deepEqual(breaches.items, [], 'nothing stayed past its limit');
      assert.match((await ok('sla', 'breaches')).stdout, /^No items\.$/m);
      assert.deepEqual((await json<{ items: unknown[] }>('facility', 'events')).items, []);
      const badFilter = await fleetctl('facility', 'events', '--kind', 'flood');
      assert.equal(badFilter.code, 3);
      assert.match(badFilter.stderr, /^\s+query\.kind[.\d]*: /m);
    },
  );

  it('prints shell completion that bash accepts', { timeout: 30_000 }, async () => {
    const script = (await ok('completion', 'bash')).stdout;
    assert.match(script, /complete -F _fleetctl fleetctl/);
    const check = await new Promise<number | null>((resolve) => {
      const bash = spawn('bash', ['-n'], { stdio: ['pipe', 'ignore', 'ignore'] });
      bash.stdin.end(script);
      bash.once('close', resolve);
    });
    assert.equal(check, 0);
    assert.match((await ok('completion', 'zsh')).stdout, /^#compdef fleetctl/);
  });
});

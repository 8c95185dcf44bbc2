import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import type { DeviceFirmwareResult, SwitchFirmwareStep, SwitchFirmwareUpdateInput } from '@fleet/domain';
import { startTemporalDevServer, type DevServer } from '@fleet/temporal';
import { createFetchArtifactActivity } from '../src/activities/fetch-artifact.js';
import { createSwitchActivities } from '../src/activities/switch-activities.js';
import { PendingPasswords } from '../src/credentials/pending-passwords.js';
import { recordHistories } from '../../../test/harness/record-histories.js';
import { logsIn, nvueLines, startSwitchBench, type SwitchBench } from './switch-helpers.js';
import type * as workflows from '../../../workflows/src/switch-workflows.js';

const taskQueue = 'switch-workflows-test';
const activity = { heartbeatTimeoutS: 10, startToCloseTimeoutS: 60, maximumAttempts: 3 };

/** A workflow history as JSON text, every payload (base64 of JSON bytes on the wire) decoded and inlined. */
function historyText(history: unknown): string {
  const inline = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(inline);
    if (typeof v !== 'object' || v === null) return v;
    const o = v as Record<string, unknown>;
    if ('metadata' in o && typeof o['data'] === 'string') {
      const text = Buffer.from(o['data'], 'base64').toString('utf8');
      try {
        return JSON.parse(text) as unknown;
      } catch {
        return text;
      }
    }
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, inline(x)]));
  };
  return JSON.stringify(inline(JSON.parse(JSON.stringify(history))));
}

describe('switch workflows on a Temporal dev server', () => {
  let temporal: DevServer;
  let env: TestWorkflowEnvironment;
  let bench: SwitchBench;
  let worker: Worker;
  let running: Promise<void>;
  const sdkLogs: string[] = [];
  const steps: Record<string, SwitchFirmwareStep> = {};

  before(
    async () => {
      // Every log line of the SDK and the worker in this process, to search for secrets.
      const text = (entry: unknown) =>
        JSON.stringify(entry, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
      Runtime.install({ logger: new DefaultLogger('DEBUG', (entry) => sdkLogs.push(text(entry))) });
      temporal = await startTemporalDevServer();
      env = await TestWorkflowEnvironment.createFromExistingServer({ address: temporal.address });
      bench = await startSwitchBench(
        ['rotate', 'reset', 'fw', 'fw-fails'].map((id) => ({ id, password: `first-pw-${id}` })),
        { timings: { rebootS: 1500 } },
      );
      steps['fpga'] = bench.firmwareStep('fpga', '0.27.0');
      steps['bmc'] = bench.firmwareStep('bmc', '88.0002.1400');
      steps['erot'] = bench.firmwareStep('erot', '1.4.8');
      steps['cpld'] = bench.firmwareStep('cpld1', '0.2.2');
      worker = await Worker.create({
        connection: env.nativeConnection,
        taskQueue,
        workflowsPath: fileURLToPath(new URL('../../../workflows/src/switch-workflows.ts', import.meta.url)),
        activities: {
          ...createSwitchActivities({
            ...bench.access,
            secretWriter: bench.secretWriter,
            pendingPasswords: new PendingPasswords(`${bench.dir}/pending.json`),
            artifacts: bench.artifacts,
            certificates: { switchCertRoot: `${bench.dir}/switch-certs`, clientTlsRoot: `${bench.dir}/client-tls` },
            pollIntervalMs: 5,
          }),
          ...createFetchArtifactActivity({ artifacts: bench.artifacts }),
        },
      });
      running = worker.run();
    },
    { timeout: 180_000 },
  );
  after(async () => {
    worker?.shutdown();
    await running;
    if (temporal) await recordHistories(temporal.address);
    await env?.teardown();
    await bench?.close();
    await temporal?.stop();
  });

  it('rotates a switch password with nothing but the reference in the history and no password in any log', async () => {
    const target = bench.target('rotate');
    const handle = await env.client.workflow.start<typeof workflows.switchPasswordRotation>('switchPasswordRotation', {
      taskQueue,
      workflowId: 'rotate-1',
      args: [{ jobId: 'rotate-1', target, activity }],
    });
    const result = await handle.result();
    assert.deepEqual(result, {
      deviceId: 'dev-rotate',
      username: 'admin',
      rotatedNow: true,
      verifiedWith: ['nvue', 'ssh'],
    });

    const next = bench.secrets()['switch/rotate']!.password;
    assert.deepEqual(
      await logsIn(bench, 'rotate', 'first-pw-rotate'),
      { nvue: false, ssh: false },
      'the old password is refused',
    );
    assert.deepEqual(await logsIn(bench, 'rotate', next), { nvue: true, ssh: true });
    const secrets = [next, 'first-pw-rotate'];
    const history = historyText(await handle.fetchHistory());
    assert.ok(history.includes('"credentialRef":"switch/rotate"'), 'payloads are decoded: the reference is there');
    assert.ok(history.includes('rotatedNow'), 'the result is there');
    const logs = [...bench.logs, ...sdkLogs].join('\n');
    assert.ok(logs.includes('switch password rotation'), 'the rotation logged its phases');
    for (const secret of secrets) {
      for (const form of [secret, Buffer.from(secret).toString('base64')]) {
        assert.ok(!history.includes(form), 'no password in the Temporal history');
        assert.ok(!logs.includes(form), 'no password in the logs');
      }
    }
  });

  it('factory-resets a switch until admin/admin logs in', async () => {
    const result = await env.client.workflow.execute<typeof workflows.switchFactoryReset>('switchFactoryReset', {
      taskQueue,
      workflowId: 'reset-1',
      args: [
        { jobId: 'reset-1', target: bench.target('reset'), timings: { pollIntervalS: 0.01, maxWaitS: 20 }, activity },
      ],
    });
    assert.equal(result.submittedWithDefaults, false);
    assert.equal(bench.sim.switch('reset').counters.factoryResets, 1);
    assert.deepEqual(bench.secrets()['switch/reset'], { username: 'admin', password: 'admin' });
  });

  const firmwareInput = (id: string, list: SwitchFirmwareStep[]): SwitchFirmwareUpdateInput => ({
    jobId: `fw-${id}`,
    target: bench.target(id),
    steps: list,
    force: false,
    timings: { actionPollS: 0.01, actionTimeoutS: 10, recoveryProbeS: 0.01, recoveryProbes: 1000 },
    activity,
  });
  const installOrder = (id: string) =>
    nvueLines(bench.sim, id).flatMap(
      (r) => /^POST \/nvue_v1\/platform\/firmware\/(\w+)\/files\//.exec(r.line)?.slice(1, 2) ?? [],
    );

  it(`updates switch firmware in BMC, ERoT, FPGA, CPLD order, skips what is current, activates once and \
verifies`, async () => {
    const result = await env.client.workflow.execute<typeof workflows.switchFirmwareUpdate>('switchFirmwareUpdate', {
      taskQueue,
      workflowId: 'fw-1',
      args: [firmwareInput('fw', [steps['cpld']!, steps['fpga']!, steps['erot']!, steps['bmc']!])],
    });
    assert.equal(result.status, 'updated');
    assert.deepEqual(
      result.components.map((c) => [c.id, c.status, c.code, c.installed]),
      [
        ['erot', 'skipped', 'SKIPPED_COMPLIANT', '1.4.8'],
        ['bmc', 'updated', 'SUCCESS', '88.0002.1400'],
        ['fpga', 'updated', 'SUCCESS', '0.27.0'],
        ['cpld1', 'updated', 'SUCCESS', '0.2.2'],
      ],
    );
    assert.deepEqual(installOrder('fw'), ['bmc', 'fpga', 'cpld1']);
    assert.equal(bench.sim.switch('fw').counters.reboots, 1, 'one power cycle activates them all');
    assert.deepEqual(
      ['bmc', 'fpga', 'cpld1'].map((c) => bench.sim.switch('fw').firmware[c as 'bmc'].actual),
      ['88.0002.1400', '0.27.0', '0.2.2'],
    );
  });

  it(`a failing component fails the job with a result per component; what was installed before it is \
activated`, async () => {
    const sw = bench.sim.switch('fw-fails');
    // FPGA fails: BMC, installed before it, is still activated and verified; CPLD is not reached.
    const failFpga = setInterval(() => {
      if (sw.fs.file(`/host/fw-images/${steps['fpga']!.fileName}`)) sw.setFaults({ installFailure: true });
    }, 1);
    const err = await env.client.workflow
      .execute<typeof workflows.switchFirmwareUpdate>('switchFirmwareUpdate', {
        taskQueue,
        workflowId: 'fw-2',
        args: [firmwareInput('fw-fails', [steps['bmc']!, steps['fpga']!, steps['cpld']!])],
      })
      .catch((e: unknown) => e);
    clearInterval(failFpga);
    sw.setFaults({});
    // A WorkflowFailedError (@temporalio/client is not a dependency of the satellite).
    const cause = (err as Error).cause;
    assert.ok(
      err instanceof Error && err.name === 'WorkflowFailedError' && cause instanceof ApplicationFailure,
      String(err),
    );
    assert.equal(cause.type, 'FIRMWARE_UPDATE_FAILED');
    const result = cause.details?.[0] as DeviceFirmwareResult;
    assert.deepEqual(
      result.components.map((c) => [c.id, c.status, c.code]),
      [
        ['bmc', 'updated', 'SUCCESS'],
        ['fpga', 'failed', 'TASK_FAILED'],
        ['cpld1', 'failed', 'TASK_FAILED'],
      ],
    );
    assert.match(result.components[1]!.message!, /^fpga: action \d+ action_failed: .*flash write error/);
    assert.match(result.components[2]!.message!, /^not reached: /);
    assert.equal(sw.counters.reboots, 1);
    assert.equal(sw.firmware.bmc.actual, '88.0002.1400');
  });
});

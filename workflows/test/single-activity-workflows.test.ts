import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import {
  jobMemoKey,
  type DevicePowerRefreshInput,
  type FirmwareInventoryReading,
  type JobMemo,
  type SwitchCertificateInstallInput,
  type SwitchCertificateResult,
} from '@fleet/domain';
import { startTemporalDevServer, type DevServer } from '@fleet/temporal';
import { recordHistories } from '../../test/harness/record-histories.js';
import { workflowCode } from './replay-helpers.js';

Runtime.install({ logger: new DefaultLogger('WARN') });

const taskQueue = 'single-activity-workflows';
const activity = { heartbeatTimeoutS: 10, startToCloseTimeoutS: 30, maximumAttempts: 1 };
const reading: FirmwareInventoryReading = { deviceId: 'dev-1', components: [{ id: 'BMC', version: '1.2.3' }] };
const certificate: SwitchCertificateResult = {
  deviceId: 'sw-1',
  domain: 'site-a',
  certificateId: 'fleet-site-a-0123456789ab',
  caCertificateId: 'fleet-site-a-ca-0123456789ab',
  changed: true,
  validTo: null,
};

/**
 * Workflows that run one satellite activity and publish it in the job memo, on a Temporal dev server with stub
 * activities (no e2e test runs them). With FLEET_RECORD_HISTORIES set, their histories are recorded for replay.
 */
describe('single-activity workflows with stub activities', () => {
  let temporal: DevServer;
  let connection: Connection;
  let client: Client;
  let worker: Worker;
  let running: Promise<void>;
  const calls: unknown[] = [];

  before(
    async () => {
      temporal = await startTemporalDevServer();
      connection = await Connection.connect({ address: temporal.address });
      client = new Client({ connection });
      worker = await Worker.create({
        connection: await NativeConnection.connect({ address: temporal.address }),
        taskQueue,
        ...workflowCode(),
        activities: {
          readFirmwareInventory: async (input: unknown) => (calls.push(input), reading),
          installSwitchCertificate: async (input: unknown) => (calls.push(input), certificate),
        },
      });
      running = worker.run();
    },
    { timeout: 120_000 },
  );
  after(async () => {
    worker?.shutdown();
    await running;
    if (temporal) await recordHistories(temporal.address);
    await connection?.close();
    await temporal?.stop();
  });

  const memo = async (workflowId: string) =>
    (await client.workflow.getHandle(workflowId).describe()).memo?.[jobMemoKey] as JobMemo;

  it('deviceFirmwareRefresh reads the inventory once and publishes it as the job result', async () => {
    const target = {
      deviceId: 'dev-1',
      nodeType: 'compute_gb200_nvidia',
      bmcUrl: 'https://10.0.0.1',
      credentialRef: 'bmc/default',
    } as const;
    const input: DevicePowerRefreshInput = { jobId: 'refresh-1', target, activity };
    const result = await client.workflow.execute('deviceFirmwareRefresh', {
      taskQueue,
      workflowId: 'refresh-1',
      args: [input],
    });
    assert.deepEqual(result, reading);
    assert.deepEqual(calls.at(-1), { target });
    assert.deepEqual(await memo('refresh-1'), { progress: { stage: 'done', percent: 100 }, result: reading });
  });

  it('switchCertificateInstall installs the domain certificate once and publishes the result', async () => {
    const target = {
      deviceId: 'sw-1',
      nvueUrl: 'https://10.0.0.2',
      ssh: { host: '10.0.0.2', port: 22 },
      credentialRef: 'nvos/default',
    };
    const input: SwitchCertificateInstallInput = { jobId: 'cert-1', target, domain: 'site-a', activity };
    const result = await client.workflow.execute('switchCertificateInstall', {
      taskQueue,
      workflowId: 'cert-1',
      args: [input],
    });
    assert.deepEqual(result, certificate);
    assert.deepEqual(calls.at(-1), { target, domain: 'site-a' });
    assert.deepEqual(await memo('cert-1'), { progress: { stage: 'done', percent: 100 }, result: certificate });
  });
});

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { WorkflowExecutionInfo } from '@temporalio/client';
import { pino } from 'pino';
import {
  applyJobProjections,
  connectDb,
  insertDevice,
  insertJobWithStartIntent,
  insertSite,
  listRmaCases,
  setLifecycle,
  updateRmaCase,
  type DbHandle,
  type Job,
} from '@fleet/db';
import { cloneTestDatabase, type TestDatabase } from '@fleet/db/testing';
import { jobMemoKey, lifecycleMemoKey, type FleetLifecycleState, type LifecycleMemo } from '@fleet/domain';
import { project } from '../src/projector.js';
import { applyRma, collectRma, noRmaReports } from '../src/rma-projection.js';

const baseUrl = process.env['FLEET_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const template = process.env['FLEET_TEST_TEMPLATE_DB'] ?? 'fleet_template';

/** A workflow as the visibility listing shows it: its status and memo. */
const listed = (status: 'RUNNING' | 'FAILED' | 'COMPLETED', memo: Record<string, unknown>) =>
  ({
    workflowId: 'w',
    runId: 'r',
    status: { name: status },
    startTime: new Date(),
    closeTime: status === 'RUNNING' ? undefined : new Date(),
    memo,
  }) as unknown as WorkflowExecutionInfo;

// What the projector's page does for RMA cases, on the projection of listed workflows (no Temporal here).
describe('RMA cases from the projection', () => {
  let database: TestDatabase;
  let handle: DbHandle;
  const log = pino({ level: 'silent' });

  before(async () => {
    database = await cloneTestDatabase(baseUrl, template);
    handle = connectDb(database.url, 3);
    await insertSite(handle.db, { id: 'wa', name: 'Agent' });
  });
  after(async () => {
    await handle?.close();
    await database?.drop();
  });

  const job = (kind: string, deviceId: string): Promise<Job> =>
    insertJobWithStartIntent(handle.db, { kind, siteId: 'wa', deviceId, params: {}, createdBy: 'test' });
  const page = async (items: { job: Job; wf: WorkflowExecutionInfo; changed?: boolean }[]) => {
    const reports = noRmaReports();
    const projections = items.map(({ job, wf, changed }) => {
      const p = project(job, wf)!;
      collectRma(reports, job, wf, p, changed ?? false);
      return p;
    });
    await handle.db.transaction(async (tx) => {
      await applyRma(tx, reports, log);
      await applyJobProjections(tx, projections);
    });
    return reports;
  };

  it('drafts one case for a remediation that ran out of steps, however often its end is projected', async () => {
    const { id: deviceId } = await insertDevice(handle.db, { name: 'tray-1', siteId: 'wa' });
    const remediate = await job('device.remediate', deviceId);
    const escalated = listed('FAILED', {
      [jobMemoKey]: {
        result: {
          deviceId,
          mode: 'remediate',
          state: 'quarantined',
          steps: [],
          escalated: { part: 'GPU_2', faultClass: 'gpu', message: 'XID 79: fallen off the bus' },
        },
        error: { code: 'REMEDIATION_EXHAUSTED', message: 'tray-1: hmc_reset, power_cycle did not clear gpu' },
      },
    });
    const other = await insertDevice(handle.db, { name: 'tray-1b', siteId: 'wa' });
    const fixed = await job('device.remediate', other.id);
    const first = await page([
      { job: remediate, wf: escalated },
      { job: fixed, wf: listed('COMPLETED', { [jobMemoKey]: { result: { fixedBy: 'hmc_reset' } } }) },
    ]);
    assert.equal(first.drafts.length, 1, 'only the exhausted one');
    await page([{ job: remediate, wf: escalated }]);
    const cases = await listRmaCases(handle.db, { limit: 10, deviceId: [deviceId] });
    assert.deepEqual(
      cases.map((c) => [c.state, c.failedPart, c.faultClass, c.jobId, c.openedBy, c.reason]),
      [
        [
          'open',
          'GPU_2',
          'gpu',
          remediate.id,
          'remediation',
          'tray-1: hmc_reset, power_cycle did not clear gpu (XID 79: fallen off the bus)',
        ],
      ],
    );
  });

  it("follows a returned device's enrolment: revalidating while it runs, closed once certified", async () => {
    const { id: deviceId } = await insertDevice(handle.db, { name: 'tray-2', siteId: 'wa' });
    const move = (to: FleetLifecycleState) =>
      setLifecycle(handle.db, { deviceId, to, writer: 'lifecycle-workflow', jobId: randomUUID(), reason: 'Test' });
    await page([
      {
        job: await job('device.remediate', deviceId),
        wf: listed('FAILED', {
          [jobMemoKey]: { result: { escalated: { part: 'GPU_0', faultClass: 'gpu', message: '' } } },
        }),
      },
    ]);
    const [c] = await listRmaCases(handle.db, { limit: 1, deviceId: [deviceId] });
    for (const to of ['shipped', 'replaced'] as const)
      await updateRmaCase(handle.db, c!.id, { to, mover: 'operator', by: 'op', reason: to });
    const enrol = await job('device.enrol', deviceId);
    const memo = (...moves: FleetLifecycleState[]): Record<string, unknown> => ({
      [lifecycleMemoKey]: {
        rev: moves.length,
        devices: { [deviceId]: { moves: moves.map((to) => ({ to, reason: 'Step' })), conditions: {} } },
      } satisfies LifecycleMemo,
    });
    await move('enrolling');
    // A listing with nothing new for the lifecycle reports nothing.
    assert.deepEqual((await page([{ job: enrol, wf: listed('RUNNING', memo('enrolling')) }])).revalidations, []);
    await page([{ job: enrol, wf: listed('RUNNING', memo('enrolling')), changed: true }]);
    assert.equal((await listRmaCases(handle.db, { limit: 1, deviceId: [deviceId] }))[0]?.state, 'revalidating');
    for (const to of ['enrolled', 'burning_in', 'certified'] as const) await move(to);
    await page([
      { job: enrol, wf: listed('COMPLETED', memo('enrolling', 'enrolled', 'burning_in', 'certified')), changed: true },
    ]);
    const [closed] = await listRmaCases(handle.db, { limit: 1, deviceId: [deviceId] });
    assert.equal(closed?.state, 'closed');
    assert.deepEqual(closed.swap, [], 'no hardware read before the case: no swap named');
    assert.equal(closed.history.at(-1)?.jobId, enrol.id);
  });
});

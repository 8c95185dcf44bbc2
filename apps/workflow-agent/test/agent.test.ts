import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@temporalio/client';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import {
  cancelIfNotStarted,
  createApiToken,
  insertDevice,
  insertFirmwarePackage,
  insertJobWithStartIntent,
  insertSite,
  type DbHandle,
} from '@fleet/db';
import { AgentConfig, waitingSweepEveryOf } from '../src/config.js';
import { dispatchOnce } from '../src/dispatcher.js';
import { createAgentMetrics } from '../src/metrics.js';
import { reconcileOnce, sweepStep } from '../src/projector.js';
import { oneClient, startAgentTestEnv, type AgentTestEnv } from './helpers/temporal-and-db.js';

// The agent against a real Temporal dev server and a real Postgres. No worker polls
// the site queue, so workflows stay Running unless the test ends them.

describe('workflow agent', () => {
  let env: AgentTestEnv;
  let handle: DbHandle;
  let client: Client;
  const metrics = createAgentMetrics(new Registry());
  const log = pino({ level: 'silent' });
  const jobIds: string[] = [];
  /** Terminates a job's workflow and waits until visibility lists it as terminated. */
  const terminate = async (id: string) => {
    await client.workflow.getHandle(id).terminate('operator pulled the plug');
    for (let i = 0; i < 50; i++) {
      const n = (await client.workflow.count(`WorkflowId = '${id}' AND ExecutionStatus = 'Terminated'`)).count;
      if (n === 1) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  before(
    async () => {
      env = await startAgentTestEnv();
      ({ handle, client } = env);
      await createApiToken(handle.db, 'agent-test', 'operator');
      await insertSite(handle.db, { id: 'lab', name: 'Lab' });
      for (let i = 0; i < 25; i++) {
        const d = await insertDevice(handle.db, {
          name: `tray-${i}`,
          siteId: 'lab',
          nodeType: 'compute_gb200_nvidia',
          bmcUrl: `http://127.0.0.1:${9000 + i}`,
          credentialRef: 'bmc/default',
        });
        const job = await insertJobWithStartIntent(handle.db, {
          kind: 'device.power',
          deviceId: d.id,
          siteId: 'lab',
          params: { action: 'on' },
          createdBy: 'agent-test',
        });
        jobIds.push(job.id);
      }
    },
    { timeout: 120_000 },
  );
  after(() => env?.close());

  const config = AgentConfig.parse({
    metrics: { port: 0 },
    database: { url: 'postgres://unused' },
    temporal: { address: '127.0.0.1:1' },
    dispatch: { batchSize: 100 },
  });

  it('starts one workflow per job, with workflow ID = job ID, on the site task queue', async () => {
    const handled = await dispatchOnce({ db: handle.db, clients: oneClient(client), config, log, metrics });
    assert.equal(handled, 25);
    const wf = await client.workflow.getHandle(jobIds[0]!).describe();
    assert.equal(wf.taskQueue, 'site-lab');
    assert.equal(wf.type, 'devicePower');
    const { rows } = await handle.pool.query(`select count(*)::int as n from intents where status = 'dispatched'`);
    assert.equal(rows[0].n, 25);
  });

  it('a start dispatched twice (a lost answer, a crashed agent) runs one workflow', async () => {
    await handle.pool.query(`update intents set status = 'pending', next_attempt_at = now() where job_id = $1`, [
      jobIds[1],
    ]);
    assert.equal(await dispatchOnce({ db: handle.db, clients: oneClient(client), config, log, metrics }), 1);
    const runs = [];
    for await (const wf of client.workflow.list({ query: `WorkflowId = '${jobIds[1]}'` })) runs.push(wf.runId);
    assert.equal(runs.length, 1);
  });

  it('projects a page of jobs with one visibility call, never one call per job', async () => {
    // Visibility is eventually consistent: wait until all 25 are listed.
    for (let i = 0; i < 50; i++) {
      const n = (await client.workflow.count(`WorkflowType = 'devicePower'`)).count;
      if (n === 25) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const stats = await reconcileOnce({ db: handle.db, client, log, metrics, pageSize: 10 });
    assert.deepEqual(
      { calls: stats.temporalCalls, workflows: stats.workflows, open: stats.openJobs },
      { calls: 3, workflows: 25, open: 25 },
    );
    const { rows } = await handle.pool.query(
      `select count(*)::int as n from jobs where state = 'running' and started_at is not null and run_id is not null`,
    );
    assert.equal(rows[0].n, 25);
  });

  it('a terminated workflow is projected as failed with its finish time, and leaves the open set', async () => {
    await terminate(jobIds[2]!);
    await reconcileOnce({ db: handle.db, client, log, metrics, pageSize: 10 });
    const { rows } = await handle.pool.query(
      `select state, finished_at is not null as finished, error->>'code' as code from jobs where id = $1`,
      [jobIds[2]],
    );
    assert.deepEqual(rows[0], { state: 'failed', finished: true, code: 'TERMINATED' });
    const stats = await reconcileOnce({ db: handle.db, client, log, metrics, pageSize: 10 });
    assert.equal(stats.openJobs, 24);
  });

  it('a quick cycle makes one call for what started or closed since, whatever the number of open jobs', async () => {
    const since = new Date();
    await terminate(jobIds[24]!);
    // 24 open jobs, 3 pages of 10, yet one call, reading only the workflow that changed.
    const stats = await reconcileOnce({ db: handle.db, client, log, metrics, pageSize: 10 }, since);
    assert.deepEqual(
      { calls: stats.temporalCalls, workflows: stats.workflows, changed: stats.changed },
      { calls: 1, workflows: 1, changed: 1 },
    );
    // The same window again: listed, but as it was, so nothing is written twice.
    const again = await reconcileOnce({ db: handle.db, client, log, metrics, pageSize: 10 }, since);
    assert.deepEqual(
      { calls: again.temporalCalls, workflows: again.workflows, changed: again.changed },
      { calls: 1, workflows: 1, changed: 0 },
    );
    const { rows } = await handle.pool.query(`select state, error->>'code' as code from jobs where id = $1`, [
      jobIds[24],
    ]);
    assert.deepEqual(rows[0], { state: 'failed', code: 'TERMINATED' });
  });

  it('a sweep reads its pages a step at a time and projects what only it sees', async () => {
    const deps = { db: handle.db, client, log, metrics, pageSize: 10 };
    const open = (await reconcileOnce(deps)).openJobs;
    assert.ok(open > 10, `${open} open jobs: more than one page`);
    const first = await sweepStep(deps, undefined, 1);
    assert.deepEqual(
      { calls: first.temporalCalls, workflows: first.workflows, open: first.openJobs },
      { calls: 1, workflows: 10, open: 10 },
    );
    assert.ok(first.after, 'the step stopped after its one page');
    // A running job the first page did not hold ends; the next step, through the last page, projects it.
    const { rows: later } = await handle.pool.query(
      // jobIds[3] stays running for the cancel test.
      `select id from jobs where state = 'running' and id > $1 and id <> $2 order by id desc limit 1`,
      [first.after, jobIds[3]],
    );
    const ended = later[0].id as string;
    await terminate(ended);
    const rest = await sweepStep(deps, first.after, 100);
    assert.equal(rest.after, undefined, 'the sweep reached the last open job');
    assert.equal(rest.openJobs, open - 10);
    assert.equal(rest.temporalCalls, Math.ceil((open - 10) / 10));
    const { rows } = await handle.pool.query(`select state from jobs where id = $1`, [ended]);
    assert.equal(rows[0].state, 'failed');
    // An end only a sweep wrote, with its close time: what widens the quick cycles' lookback (lookback.ts).
    assert.equal(rest.endCloses.length, 1);
    assert.equal(rest.unseenEndCloses.length, 1, 'no quick cycle had listed it');
    assert.ok(Math.abs(Date.now() - rest.endCloses[0]!) < 60_000, `closed at ${new Date(rest.endCloses[0]!)}`);
  });

  /**
   * A client whose visibility answers the sweep's query (WorkflowId IN ...) at once but hands the answer over only
   * when let through: what the sweep writes is as of the call.
   */
  const gatedSweep = () => {
    let letThrough!: () => void;
    const gate = new Promise<void>((resolve) => (letThrough = resolve));
    let listed!: () => void;
    const sweepListed = new Promise<void>((resolve) => (listed = resolve));
    const workflow = new Proxy(client.workflow, {
      get(target, prop) {
        if (prop === 'list')
          return (options: { query?: string }) => {
            if (!options.query?.startsWith('WorkflowId IN')) return target.list(options);
            return (async function* () {
              const page = [];
              for await (const wf of target.list(options)) page.push(wf);
              listed();
              await gate;
              yield* page;
            })();
          };
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const deps = { db: handle.db, client: { ...client, workflow } as Client, log, metrics, pageSize: 100 };
    return { deps, letThrough, sweepListed };
  };
  const aRunningJob = async () =>
    (
      await handle.pool.query(`select id from jobs where state = 'running' and id <> $1 order by id limit 1`, [
        jobIds[3],
      ])
    ).rows[0].id as string;

  it(`a quick cycle does not wait for a sweep whose listing is slow, and the sweep's older listing, written last, \
does not undo what the quick cycle wrote`, async () => {
    const { deps, letThrough, sweepListed } = gatedSweep();
    const ended = await aRunningJob();
    const since = new Date();
    const sweep = sweepStep(deps, undefined, 1);
    await sweepListed;
    // The sweep listed the job running; it ends now, and a quick cycle projects that while the sweep still waits.
    await terminate(ended);
    const quick = await reconcileOnce(deps, since);
    assert.ok(quick.changed >= 1, 'the quick cycle wrote the ended job');
    const { rows: mid } = await handle.pool.query(`select state, updated_at from jobs where id = $1`, [ended]);
    assert.equal(mid[0].state, 'failed');
    letThrough();
    const swept = await sweep;
    assert.ok(swept.openJobs > 1);
    assert.equal(swept.skipped, 1, "the sweep's view of the ended job was not written; the others were");
    const { rows } = await handle.pool.query(`select state, updated_at from jobs where id = $1`, [ended]);
    assert.deepEqual(rows[0], mid[0], 'the older listing wrote nothing over the newer one');
  });

  it('an end two listings both see is written once: by the first to reach Postgres', async () => {
    const { deps, letThrough, sweepListed } = gatedSweep();
    const ended = await aRunningJob();
    const since = new Date();
    await terminate(ended);
    // Both listings see the end; the sweep's, taken first, reaches Postgres last.
    const sweep = sweepStep(deps, undefined, 1);
    await sweepListed;
    const quick = await reconcileOnce(deps, since);
    assert.equal(quick.endCloses.length, 1, 'the quick cycle wrote the end');
    assert.deepEqual(quick.unseenEndCloses, [], 'one a quick cycle wrote, it listed');
    letThrough();
    const swept = await sweep;
    assert.deepEqual(
      { skipped: swept.skipped, ends: swept.endCloses.length },
      { skipped: 1, ends: 0 },
      'the page transaction found the job ended and left it (and what follows from its end) alone',
    );
  });

  it('a sweep step that fails throws and leaves quick cycles working; the next step retries it', async () => {
    // Visibility answers the quick cycle's query but not the sweep's (WorkflowId IN ...).
    const workflow = new Proxy(client.workflow, {
      get(target, prop) {
        if (prop === 'list')
          return (options: { query?: string }) => {
            if (options.query?.startsWith('WorkflowId IN')) throw new Error('visibility store unavailable');
            return target.list(options);
          };
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const failing = { db: handle.db, client: { ...client, workflow } as Client, log, metrics, pageSize: 10 };
    const since = new Date();
    const { rows: running } = await handle.pool.query(
      `select id from jobs where state = 'running' and id <> $1 order by id limit 1`,
      [jobIds[3]],
    );
    const ended = running[0].id as string;
    await terminate(ended);
    await assert.rejects(sweepStep(failing, undefined, 2), /visibility store unavailable/);
    const quick = await reconcileOnce(failing, since);
    assert.equal(quick.changed, 1);
    const { rows } = await handle.pool.query(`select state from jobs where id = $1`, [ended]);
    assert.equal(rows[0].state, 'failed', 'the quick cycle projected the ended job despite the sweep failing');
    const retried = await sweepStep({ ...failing, client }, undefined, 100);
    assert.ok(retried.openJobs > 0);
  });

  it('a cancel intent reaches the running workflow; the job stays cancelling until the workflow ends', async () => {
    await requestCancel(jobIds[3]!);
    assert.equal(await dispatchOnce({ db: handle.db, clients: oneClient(client), config, log, metrics }), 1);
    // Without a worker the workflow cannot act on it yet, but the request is in its history.
    const history = await client.workflow.getHandle(jobIds[3]!).fetchHistory();
    assert.ok(
      history.events?.some((e) => e.workflowExecutionCancelRequestedEventAttributes),
      'cancel requested',
    );
    await reconcileOnce({ db: handle.db, client, log, metrics, pageSize: 10 });
    const { rows } = await handle.pool.query(`select state from jobs where id = $1`, [jobIds[3]]);
    assert.equal(rows[0].state, 'cancelling', 'a running workflow does not pull a cancelling job back to running');
  });

  it(`an NVOS install starts switchNvosInstall with the NVOS target and the image by digest; a switch without NVOS \
endpoints fails at once`, async () => {
    const image = (await insertFirmwarePackage(handle.db, {
      digest: 'a'.repeat(64),
      sizeBytes: 1024,
      fileName: 'nvos-amd64-25.06.1000.bin',
      format: 'nvos',
      packageVersion: '25.06.1000',
      metadata: { format: 'nvos', buildId: '25.06.1000' },
      uploadedBy: 'agent-test',
    }))!;
    const device = {
      siteId: 'lab',
      nodeType: 'switch_gb200_nvidia',
      bmcUrl: 'https://10.0.0.4',
      credentialRef: 'bmc/default',
    };
    const sw = await insertDevice(handle.db, {
      ...device,
      name: 'switch-1',
      nvosUrl: 'https://10.0.0.5',
      nvosSsh: '10.0.0.5:22',
      nvosCredentialRef: 'nvos/default',
    });
    const bare = await insertDevice(handle.db, { ...device, name: 'switch-2' });
    const params = { package_id: image.id, build_id: '25.06.1000' };
    const job = await insertJobWithStartIntent(handle.db, {
      kind: 'switch.nvos_install',
      deviceId: sw.id,
      siteId: 'lab',
      params,
      createdBy: 'agent-test',
    });
    const refused = await insertJobWithStartIntent(handle.db, {
      kind: 'switch.nvos_install',
      deviceId: bare.id,
      siteId: 'lab',
      params,
      createdBy: 'agent-test',
    });
    await dispatchOnce({ db: handle.db, clients: oneClient(client), config, log, metrics });
    const history = await client.workflow.getHandle(job.id).fetchHistory();
    const started = history.events![0]!.workflowExecutionStartedEventAttributes!;
    assert.equal(started.workflowType!.name, 'switchNvosInstall');
    const input = JSON.parse(Buffer.from(started.input!.payloads![0]!.data!).toString());
    assert.deepEqual(input.target, {
      deviceId: sw.id,
      nvueUrl: 'https://10.0.0.5',
      ssh: { host: '10.0.0.5', port: 22 },
      credentialRef: 'nvos/default',
      bmcCredentialRef: 'bmc/default',
    });
    assert.deepEqual(input.image, {
      digest: 'a'.repeat(64),
      size: 1024,
      fileName: 'nvos-amd64-25.06.1000.bin',
      buildId: '25.06.1000',
    });
    const { rows } = await handle.pool.query(
      `select state, error->>'code' as code, error->>'message' as message from jobs where id = $1`,
      [refused.id],
    );
    assert.deepEqual(rows[0], {
      state: 'failed',
      code: 'FAILED_PRECONDITION',
      message: 'device switch-2 has no NVOS NVUE URL, NVOS SSH endpoint in the inventory',
    });
  });

  it(`a password rotation whose switch reference became shared after the request fails at dispatch and never reaches \
the satellite`, async () => {
    const device = {
      siteId: 'lab',
      nodeType: 'switch_gb200_nvidia',
      bmcUrl: 'https://10.0.1.4',
      credentialRef: 'bmc/rotate',
      nvosUrl: 'https://10.0.1.5',
      nvosSsh: '10.0.1.5:22',
    };
    const own = await insertDevice(handle.db, { ...device, name: 'switch-own', nvosCredentialRef: 'nvos/switch-own' });
    const sw = await insertDevice(handle.db, { ...device, name: 'switch-rot', nvosCredentialRef: 'nvos/switch-rot' });
    const other = await insertDevice(handle.db, {
      ...device,
      name: 'switch-other',
      nvosCredentialRef: 'nvos/switch-other',
    });
    // Both requests passed the hub's check; then a NetBox sync gave switch-other the same NVOS reference as switch-rot.
    const allowed = await insertJobWithStartIntent(handle.db, {
      kind: 'switch.password_rotation',
      deviceId: own.id,
      siteId: 'lab',
      params: {},
      createdBy: 'agent-test',
    });
    const job = await insertJobWithStartIntent(handle.db, {
      kind: 'switch.password_rotation',
      deviceId: sw.id,
      siteId: 'lab',
      params: {},
      createdBy: 'agent-test',
    });
    await handle.pool.query(`update devices set nvos_credential_ref = 'nvos/switch-rot' where id = $1`, [other.id]);
    await dispatchOnce({ db: handle.db, clients: oneClient(client), config, log, metrics });
    const { rows } = await handle.pool.query(
      `select state, error->>'code' as code, error->>'message' as message from jobs where id = $1`,
      [job.id],
    );
    assert.equal(rows[0].state, 'failed');
    assert.equal(rows[0].code, 'FAILED_PRECONDITION');
    assert.match(rows[0].message, /nvos\/switch-rot of switch-rot is also used by the NVOS of switch-other/);
    await assert.rejects(client.workflow.getHandle(job.id).describe(), /not found/i);
    assert.equal(
      (await client.workflow.getHandle(allowed.id).describe()).type,
      'switchPasswordRotation',
      'a reference of its own still rotates',
    );
  });

  it('a start of a kind whose children do the work (batch.power) fails for good, never reaching Temporal', async () => {
    const job = await insertJobWithStartIntent(handle.db, {
      kind: 'batch.power',
      siteId: 'lab',
      params: { action: 'on' },
      createdBy: 'agent-test',
    });
    await dispatchOnce({ db: handle.db, clients: oneClient(client), config, log, metrics });
    const { rows } = await handle.pool.query(
      `select j.state, j.error->>'code' as code, j.error->>'message' as message, i.status
         from jobs j join intents i on i.job_id = j.id where j.id = $1`,
      [job.id],
    );
    assert.deepEqual(rows[0], {
      state: 'failed',
      code: 'INVALID_ARGUMENT',
      message: 'job kind batch.power starts no workflow of its own: its child jobs do the work',
      status: 'failed',
    });
    await assert.rejects(client.workflow.getHandle(job.id).describe(), /not found/i);
  });

  it("a database error is logged and stored on the intent without the statement's values", async () => {
    const lines: string[] = [];
    const capture = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
    const sw = await insertDevice(handle.db, {
      name: 'switch-db',
      siteId: 'lab',
      nodeType: 'switch_gb200_nvidia',
      bmcUrl: 'https://10.0.2.4',
      credentialRef: 'bmc/default',
      nvosUrl: 'https://10.0.2.5',
      nvosSsh: '10.0.2.5:22',
      nvosCredentialRef: 'nvos/switch-db',
    });
    // Not a uuid: Postgres refuses the lookup, and drizzle's error carries the value in its message ("params: …").
    const job = await insertJobWithStartIntent(handle.db, {
      kind: 'switch.nvos_install',
      deviceId: sw.id,
      siteId: 'lab',
      params: { package_id: 'pkg-VALUE-0451' },
      createdBy: 'agent-test',
    });
    await dispatchOnce({ db: handle.db, clients: oneClient(client), config, log: capture, metrics });
    const { rows } = await handle.pool.query(
      `select i.status, i.last_error, j.state from intents i join jobs j on j.id = i.job_id where i.job_id = $1`,
      [job.id],
    );
    assert.equal(rows[0].status, 'pending', 'a database error is retried');
    assert.equal(rows[0].state, 'queued');
    assert.match(rows[0].last_error, /failed query: select .*firmware_packages.*SQLSTATE 22P02/i);
    const logged = lines.filter((l) => l.includes(job.id)).join('\n');
    assert.match(logged, /will retry/);
    for (const text of [rows[0].last_error, logged]) assert.doesNotMatch(text, /VALUE-0451/);
  });

  it('a job cancelled before its start was dispatched never reaches Temporal', async () => {
    const d = await insertDevice(handle.db, {
      name: 'tray-late',
      siteId: 'lab',
      nodeType: 'compute_gb200_nvidia',
      bmcUrl: 'http://127.0.0.1:9999',
      credentialRef: 'bmc/default',
    });
    const job = await insertJobWithStartIntent(handle.db, {
      kind: 'device.power',
      deviceId: d.id,
      siteId: 'lab',
      params: { action: 'on' },
      createdBy: 'agent-test',
    });
    // The cancel is leased first, as if the start had been delayed by a retry backoff.
    await delayIntents(job.id);
    await requestCancel(job.id);
    await dispatchOnce({ db: handle.db, clients: oneClient(client), config, log, metrics });
    const { rows } = await handle.pool.query(`select state, error->>'code' as code from jobs where id = $1`, [job.id]);
    assert.deepEqual(rows[0], { state: 'cancelled', code: 'CANCELLED' });
    await assert.rejects(client.workflow.getHandle(job.id).describe(), /not found/i);
  });
  /** As the hub cancels a job: marked cancelling, with a cancel intent. */
  const requestCancel = async (jobId: string) => {
    await handle.pool.query(`update jobs set state = 'cancelling' where id = $1`, [jobId]);
    await handle.pool.query(`insert into intents (job_id, kind) values ($1, 'cancel')`, [jobId]);
  };
  /** The job's start was leased once and failed with `error`: it waits an hour for its retry. */
  const startTriedBefore = (jobId: string, error: string) =>
    handle.pool.query(
      `update intents set attempts = 1, last_error = $2, next_attempt_at = now() + interval '1 hour' where job_id = $1`,
      [jobId, error],
    );
  /** The job's intents wait an hour: a cancel written after this is leased first. */
  const delayIntents = (jobId: string) =>
    handle.pool.query(`update intents set next_attempt_at = now() + interval '1 hour' where job_id = $1`, [jobId]);
  const powerJobOn = async (name: string) => {
    const d = await insertDevice(handle.db, {
      name,
      siteId: 'lab',
      nodeType: 'compute_gb200_nvidia',
      bmcUrl: 'http://127.0.0.1:9997',
      credentialRef: 'bmc/default',
    });
    return insertJobWithStartIntent(handle.db, {
      kind: 'device.power',
      deviceId: d.id,
      siteId: 'lab',
      params: { action: 'on' },
      createdBy: 'agent-test',
    });
  };
  const intentsOf = async (jobId: string) =>
    (await handle.pool.query(`select kind, status from intents where job_id = $1 order by id`, [jobId])).rows.map(
      (r) => `${r.kind}:${r.status}`,
    );

  it('a job cancelled while its start waited, both leased together, never starts and ends cancelled', async () => {
    const job = await powerJobOn('tray-same-lease');
    await requestCancel(job.id);
    await dispatchOnce({ db: handle.db, clients: oneClient(client), config, log, metrics });
    assert.deepEqual((await jobStates([job.id]))[job.id], { state: 'cancelled', code: 'CANCELLED' });
    assert.deepEqual(await intentsOf(job.id), ['start:failed', 'cancel:dispatched']);
    await assert.rejects(client.workflow.getHandle(job.id).describe(), /not found/i);
  });

  it(`a cancel after a start whose reply was lost goes to the workflow that start made; the retried start finds it \
and the job stays its workflow's`, async () => {
    const job = await powerJobOn('tray-lost-reply');
    // The first attempt started the workflow and lost the reply: the start waits for its retry.
    await client.workflow.start('devicePower', { taskQueue: 'site-lab', workflowId: job.id, args: [] });
    await startTriedBefore(job.id, 'reply lost');
    await requestCancel(job.id);
    await dispatchOnce({ db: handle.db, clients: oneClient(client), config, log, metrics });
    const history = await client.workflow.getHandle(job.id).fetchHistory();
    assert.ok(
      history.events?.some((e) => e.workflowExecutionCancelRequestedEventAttributes),
      'the cancel reached the workflow',
    );
    assert.deepEqual((await jobStates([job.id]))[job.id], { state: 'cancelling', code: null });

    await handle.pool.query(`update intents set next_attempt_at = now() where job_id = $1 and kind = 'start'`, [
      job.id,
    ]);
    await dispatchOnce({ db: handle.db, clients: oneClient(client), config, log, metrics });
    assert.deepEqual(await intentsOf(job.id), ['start:dispatched', 'cancel:dispatched']);
    assert.deepEqual((await jobStates([job.id]))[job.id], { state: 'cancelling', code: null });
    await terminate(job.id);
  });

  it(`a cancel after a start tried before that never reached Temporal waits for it; the start's retry ends the job \
cancelled without starting it`, async () => {
    const job = await powerJobOn('tray-start-refused');
    await startTriedBefore(job.id, 'refused');
    await requestCancel(job.id);
    await dispatchOnce({ db: handle.db, clients: oneClient(client), config, log, metrics });
    // Not found: no workflow, or one closed already. The start may yet be made (its call in flight elsewhere): it is
    // not claimed here, and the cancel waits for it.
    assert.deepEqual(await intentsOf(job.id), ['start:pending', 'cancel:pending']);
    assert.deepEqual((await jobStates([job.id]))[job.id], { state: 'cancelling', code: null });

    await handle.pool.query(`update intents set next_attempt_at = now() where job_id = $1`, [job.id]);
    await dispatchOnce({ db: handle.db, clients: oneClient(client), config, log, metrics });
    assert.deepEqual(await intentsOf(job.id), ['start:failed', 'cancel:dispatched']);
    assert.deepEqual((await jobStates([job.id]))[job.id], { state: 'cancelled', code: 'CANCELLED' });
    await assert.rejects(client.workflow.getHandle(job.id).describe(), /not found/i);
  });

  it(`a start claimed by a cancel while its call was in flight (another agent, after this lease ran out) cancels \
the workflow it made`, async () => {
    const job = await powerJobOn('tray-claimed-in-flight');
    /** `target`'s members, bound to it, but `name` replaced. */
    const replacing = <T extends object>(target: T, name: string, value: unknown): T =>
      new Proxy(target, {
        get: (t, p) => {
          if (p === name) return value;
          const v = Reflect.get(t, p, t) as unknown;
          return typeof v === 'function' ? v.bind(t) : v;
        },
      });
    const racing = replacing(
      client,
      'workflow',
      replacing(client.workflow, 'start', async (...args: unknown[]) => {
        const started = await (client.workflow.start as (...a: unknown[]) => Promise<unknown>)(...args);
        assert.ok(await cancelIfNotStarted(handle.db, job.id), 'the other agent claims the start');
        return started;
      }),
    );
    await dispatchOnce({ db: handle.db, clients: { forSite: () => racing, any: client }, config, log, metrics });
    assert.deepEqual(await intentsOf(job.id), ['start:failed']);
    assert.deepEqual((await jobStates([job.id]))[job.id], { state: 'cancelled', code: 'CANCELLED' });
    const history = await client.workflow.getHandle(job.id).fetchHistory();
    assert.ok(
      history.events?.some((e) => e.workflowExecutionCancelRequestedEventAttributes),
      'the workflow the start made is cancelled',
    );
    await terminate(job.id);
  });

  /** A dispatched campaign job and a queued device job under it for each of `names` (rows only, no workflows). */
  const campaignWithDevices = async (names: string[], start: 'dispatched' | 'pending' = 'dispatched') => {
    const job = async (kind: string, o: { parentId?: string; deviceId?: string } = {}) => {
      const { rows } = await handle.pool.query(
        `insert into jobs (kind, state, site_id, parent_id, device_id, params, created_by)
         values ($1, 'queued', 'lab', $2, $3, '{}', 'agent-test') returning id`,
        [kind, o.parentId ?? null, o.deviceId ?? null],
      );
      return rows[0].id as string;
    };
    const campaign = await job('firmware.campaign');
    await handle.pool.query(`insert into intents (job_id, kind, status) values ($1, 'start', $2)`, [campaign, start]);
    const devices: string[] = [];
    for (const name of names) {
      const device = await insertDevice(handle.db, {
        name,
        siteId: 'lab',
        nodeType: 'compute_gb200_nvidia',
        bmcUrl: 'http://127.0.0.1:9998',
        credentialRef: 'bmc/default',
      });
      devices.push(await job('device.firmware_update', { parentId: campaign, deviceId: device.id }));
    }
    return { campaign, devices };
  };
  const jobStates = async (ids: string[]) => {
    const { rows } = await handle.pool.query(
      `select id, state, error->>'code' as code from jobs where id = any($1::uuid[])`,
      [ids],
    );
    return Object.fromEntries(rows.map((r) => [r.id, { state: r.state, code: r.code }]));
  };
  for (const by of ['a light sweep', 'a quick cycle'] as const)
    it(`a campaign's end listed by ${by} is written after its open devices are listed by id: a device whose \
workflow ran unseen is written from it, one never started as not reached`, async () => {
      const { campaign, devices } = await campaignWithDevices([`tray-ran (${by})`, `tray-never (${by})`]);
      const [ran, never] = devices as [string, string];
      // Both workflows ended with no listing having shown them: the device is still queued in Postgres.
      const since = new Date(Date.now() - 1000);
      for (const id of [ran, campaign]) {
        await client.workflow.start('firmwareCampaign', { taskQueue: 'site-lab', workflowId: id, args: [] });
        await terminate(id);
      }
      const deps = { db: handle.db, client, log, metrics, pageSize: 100 };
      // The light sweep reads the campaign, not its queued devices; the quick cycle lists both ends, the device's
      // first, so only the campaign's is taken here (the device's is dropped as if visibility had shown it late).
      if (by === 'a light sweep') await sweepStep(deps, undefined, 100, false);
      else
        await reconcileOnce(
          {
            ...deps,
            client: {
              ...client,
              workflow: new Proxy(client.workflow, {
                get(target, prop) {
                  if (prop === 'list')
                    return (options: { query?: string }) =>
                      (async function* () {
                        for await (const wf of target.list(options))
                          if (options.query?.startsWith('WorkflowId IN') || wf.workflowId !== ran) yield wf;
                      })();
                  const value = Reflect.get(target, prop, target) as unknown;
                  return typeof value === 'function' ? value.bind(target) : value;
                },
              }),
            } as Client,
          },
          since,
        );
      assert.deepEqual(await jobStates([campaign, ran, never]), {
        [campaign]: { state: 'failed', code: 'TERMINATED' },
        [ran]: { state: 'failed', code: 'TERMINATED' },
        [never]: { state: 'cancelled', code: 'NOT_REACHED' },
      });
    });

  it(`a device still running when its campaign ended keeps its job open, the device busy, until its own workflow's \
end is written; only the queued devices end as not reached`, async () => {
    const { campaign, devices } = await campaignWithDevices(['tray-outliving', 'tray-queued']);
    const [running, queued] = devices as [string, string];
    // No worker serves site-lab: the device's workflow runs until terminated, as a terminated campaign's device does
    // until its cancel request (parent close policy) reaches it.
    await client.workflow.start('firmwareCampaign', { taskQueue: 'site-lab', workflowId: running, args: [] });
    await client.workflow.start('firmwareCampaign', { taskQueue: 'site-lab', workflowId: campaign, args: [] });
    await terminate(campaign);
    const deps = { db: handle.db, client, log, metrics, pageSize: 100 };
    await sweepStep(deps, undefined, 100, false);
    assert.deepEqual(await jobStates([campaign, running, queued]), {
      [campaign]: { state: 'failed', code: 'TERMINATED' },
      [running]: { state: 'running', code: null },
      [queued]: { state: 'cancelled', code: 'NOT_REACHED' },
    });

    await terminate(running);
    await sweepStep(deps, undefined, 100, false);
    assert.deepEqual((await jobStates([running]))[running], { state: 'failed', code: 'TERMINATED' });
  });

  for (const how of ['cancelled before its start was dispatched', 'whose start fails for good'] as const)
    it(`a campaign ${how} frees its devices: their queued jobs close as not reached`, async () => {
      const { campaign, devices } = await campaignWithDevices(
        [1, 2].map((i) => `tray-unstarted-${how.split(' ')[0]}-${i}`),
        'pending',
      );
      if (how.startsWith('cancelled')) {
        // The cancel is leased first, as if the start had been delayed by a retry backoff.
        await delayIntents(campaign);
        await requestCancel(campaign);
      }
      // Otherwise the start fails for good: the campaign job has no plan (no campaigns row).
      await dispatchOnce({ db: handle.db, clients: oneClient(client), config, log, metrics });
      const states = await jobStates([campaign, ...devices]);
      assert.deepEqual(
        states[campaign],
        how.startsWith('cancelled')
          ? { state: 'cancelled', code: 'CANCELLED' }
          : { state: 'failed', code: 'NOT_FOUND' },
      );
      for (const d of devices) assert.deepEqual(states[d], { state: 'cancelled', code: 'NOT_REACHED' }, d);
      await assert.rejects(client.workflow.getHandle(campaign).describe(), /not found/i);
    });

  it(`a sweep of every open job comes at least every 10 minutes: unset, every tenth sweep or fewer; a setting that \
spaces them further is refused`, () => {
    const base = { metrics: { port: 0 }, database: { url: 'postgres://unused' }, temporal: { address: '127.0.0.1:1' } };
    const every = (projection?: Record<string, number>) =>
      waitingSweepEveryOf(AgentConfig.parse({ ...base, ...(projection ? { projection } : {}) }).projection);
    assert.equal(every(), 10);
    // Valid before the setting existed: sweeps 100 s apart, so every sixth reads the queued devices.
    assert.equal(every({ intervalMs: 20_000, sweepEvery: 5 }), 6);
    assert.equal(every({ intervalMs: 60_000, sweepEvery: 2 }), 5);
    assert.equal(every({ intervalMs: 1000, sweepEvery: 5, waitingSweepEvery: 3 }), 3);
    const spaced = AgentConfig.safeParse({
      ...base,
      projection: { intervalMs: 1000, sweepEvery: 100, waitingSweepEvery: 7 },
    });
    assert.equal(spaced.success, false);
    assert.deepEqual(
      spaced.error!.issues.map((i) => i.path.join('.')),
      ['projection.waitingSweepEvery'],
    );
  });
});

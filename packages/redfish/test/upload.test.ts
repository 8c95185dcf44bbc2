import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, open, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { pushFirmware, RedfishClient, RedfishError, waitForTask } from '../src/index.js';
import { fakeBmc, type FakeBmc } from './helpers/fake-bmc.js';
import { credentials, json } from './helpers/servers.js';

const MiB = 1024 * 1024;

async function sha256File(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const c of createReadStream(path)) h.update(c as Buffer);
  return h.digest('hex');
}

/** A sparse file of `size` bytes with a few marker bytes, so the hash checks order and offsets. */
async function sparseImage(path: string, size: number): Promise<void> {
  await truncate(path, 0).catch(() => undefined);
  const fh = await open(path, 'w');
  try {
    await fh.truncate(size);
    for (const at of [0, 12_345, Math.floor(size / 2), size - 1]) await fh.write(Buffer.from([0x5a]), 0, 1, at);
  } finally {
    await fh.close();
  }
}

describe('multipart firmware push and task monitoring', () => {
  let dir: string;
  let bmc: FakeBmc;
  let client: RedfishClient;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleet-fw-'));
    bmc = await fakeBmc(credentials);
    client = new RedfishClient({ baseUrl: bmc.url, credentials, retryBaseDelayMs: 5 });
  });
  beforeEach(() => {
    bmc.state.uploads.length = 0;
    bmc.requests.length = 0;
    delete bmc.state.intercept;
    delete bmc.state.uploadReadDelayMs;
  });
  after(async () => {
    await client.close();
    await bmc.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('streams a 256 MiB image from disk: exact bytes and sha256 arrive, client memory stays flat', async () => {
    const path = join(dir, 'nvfw_GB200-P4975_test.fwpkg');
    const size = 256 * MiB;
    await sparseImage(path, size);
    const expected = await sha256File(path);

    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
    let pushed;
    try {
      pushed = await pushFirmware(client, {
        filePath: path,
        targets: ['/redfish/v1/Chassis/HGX_Chassis_0'],
        forceUpdate: true,
      });
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, process.memoryUsage().rss);

    const got = bmc.state.uploads[0];
    assert.ok(got);
    assert.equal(got.fileBytes, size);
    assert.equal(got.sha256, expected);
    assert.deepEqual(got.parameters, { Targets: ['/redfish/v1/Chassis/HGX_Chassis_0'], ForceUpdate: true });
    assert.equal(got.fileName, 'nvfw_GB200-P4975_test.fwpkg');
    const post = bmc.requests.find((r) => r.method === 'POST');
    assert.equal(post?.path, '/redfish/v1/UpdateService/update-multipart');
    assert.equal(Number(post?.headers['content-length']), got.contentLength);
    assert.equal(post?.headers['transfer-encoding'], undefined, 'a known length, not chunked');
    assert.ok(peak - baseline < 64 * MiB, `RSS grew by ${((peak - baseline) / MiB).toFixed(1)} MiB`);
    assert.deepEqual(pushed, { taskUri: '/redfish/v1/TaskService/Tasks/1', status: 202 });

    const progress: (number | undefined)[] = [];
    const result = await waitForTask(client, pushed.taskUri, {
      pollIntervalMs: 5,
      onProgress: (t) => progress.push(t.PercentComplete),
    });
    assert.equal(result.outcome, 'succeeded');
    assert.equal(result.taskState, 'Completed');
    assert.deepEqual(progress, [10, 100]);
  });

  it('a slow BMC gets random bytes intact while the client reuses its read buffers under backpressure', async () => {
    const path = join(dir, 'random.fwpkg');
    // More than loopback socket buffers absorb, so writes do back up; not a whole number of reads.
    const size = 16 * MiB + 12_345;
    await writeFile(path, randomBytes(size));
    const expected = await sha256File(path);
    bmc.state.uploadReadDelayMs = 1;
    await pushFirmware(client, { filePath: path });
    assert.equal(bmc.state.uploads[0]?.fileBytes, size);
    assert.equal(bmc.state.uploads[0]?.sha256, expected);
  });

  it('sends Targets [] and ForceUpdate false by default, and reports a failed task with its message', async () => {
    const path = join(dir, 'small.fwpkg');
    await sparseImage(path, 4096);
    bmc.state.taskStates = [
      { TaskState: 'Running', PercentComplete: 40 },
      {
        TaskState: 'Completed',
        TaskStatus: 'OK',
        PercentComplete: 100,
        Messages: [
          { MessageId: 'Update.1.0.ComponentComparisonStampLower', Severity: 'OK' },
          { MessageId: 'Base.1.13.0.TaskAborted', Message: 'Component comparison stamp is lower', Severity: 'Warning' },
        ],
      },
    ];
    const { taskUri } = await pushFirmware(client, { filePath: path });
    assert.deepEqual(bmc.state.uploads[0]?.parameters, { Targets: [], ForceUpdate: false });
    const result = await waitForTask(client, taskUri, { pollIntervalMs: 5 });
    assert.equal(result.outcome, 'failed');
    assert.equal(result.failureReason, 'Component comparison stamp is lower');
  });

  it('a 503 before the BMC takes the upload is resent with a fresh stream; a reset mid-upload is not', async () => {
    const path = join(dir, 'retry.fwpkg');
    await sparseImage(path, 2 * MiB);
    const expected = await sha256File(path);
    let refused = 0;
    bmc.state.intercept = (req, res, p) => {
      if (req.method !== 'POST' || p !== '/redfish/v1/UpdateService/update-multipart' || refused++ > 0) return false;
      req.resume();
      req.on('end', () => json(res, 503, {}, { 'retry-after': '0' }));
      return true;
    };
    await pushFirmware(client, { filePath: path });
    assert.equal(bmc.state.uploads.length, 1);
    assert.equal(bmc.state.uploads[0]?.sha256, expected);

    bmc.state.intercept = (req, _res, p) => {
      if (req.method !== 'POST' || p !== '/redfish/v1/UpdateService/update-multipart') return false;
      req.once('data', () => req.socket.destroy());
      return true;
    };
    const posts = () => bmc.requests.filter((r) => r.method === 'POST').length;
    const before = posts();
    const err = await pushFirmware(client, { filePath: path }).catch((e: unknown) => e);
    assert.ok(err instanceof RedfishError && err.code === 'Unavailable', String(err));
    assert.equal(posts() - before, 1);
  });

  it('refuses an image larger than MaxImageSizeBytes before sending anything', async () => {
    const path = join(dir, 'huge.fwpkg');
    await sparseImage(path, 600 * MiB);
    const err = await pushFirmware(client, { filePath: path }).catch((e: unknown) => e);
    assert.ok(err instanceof RedfishError && err.code === 'InvalidArgument', String(err));
    assert.equal(bmc.requests.filter((r) => r.method === 'POST').length, 0);
  });

  it('waitForTask gives up at its deadline with Timeout', async () => {
    bmc.state.taskStates = [{ TaskState: 'Running', PercentComplete: 1 }];
    const err = await waitForTask(client, '/redfish/v1/TaskService/Tasks/1', {
      pollIntervalMs: 10,
      timeoutMs: 60,
    }).catch((e: unknown) => e);
    assert.ok(err instanceof RedfishError && err.code === 'Timeout', String(err));
  });
});

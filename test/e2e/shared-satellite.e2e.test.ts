import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Stack, expectStatus } from '../harness/stack.js';

/** The process's log lines that name a job's workflow (the activity's attempt log carries its workflowId). */
const linesOf = (log: string, jobId: string) => log.split('\n').filter((l) => l.includes(`"workflowId":"${jobId}"`));

describe("two sites' workers in one satellite process (the scale bench's shape)", () => {
  // bmc-0001 is site A's, bmc-0002 site B's; one satellite process runs both sites' workers.
  const stack = new Stack({ sites: 2, bmcs: 1, timeScale: 0.02, satelliteProcesses: 1 });
  const [siteA, siteB] = stack.siteIds as [string, string];
  before(() => stack.start(), { timeout: 180_000 });
  after(() => stack.stop(), { timeout: 60_000 });

  it("runs each site's worker on its own task queue, and each site's job on its own worker", async () => {
    assert.equal(stack.satelliteProcesses.length, 1);
    assert.equal(stack.satellites.get(siteA), stack.satellites.get(siteB));
    const log = () => stack.satellite.output;
    // The Temporal SDK's lines go to the site whose task queue they name (its workers' state changes, at INFO).
    const sdkLines = log()
      .split('\n')
      .filter((l) => l.includes('"sdk":"temporal"') && l.includes('"msg":"Worker state changed"'));
    for (const site of [siteA, siteB]) {
      const own = sdkLines.filter((l) => l.includes(`"taskQueue":"site-${site}"`));
      assert.ok(own.length > 0, `no SDK line of site ${site}'s worker`);
      for (const line of own) assert.ok(line.includes(`"siteId":"${site}"`) && !line.includes('siteIds'), line);
    }
    for (const site of [siteA, siteB])
      assert.ok(
        log()
          .split('\n')
          .some(
            (l) => l.includes(`"siteId":"${site}","taskQueue":"site-${site}"`) && l.includes('site worker started'),
          ),
        `no worker started for ${site}`,
      );

    const jobs = await Promise.all(
      [
        [siteA, 'bmc-0001'],
        [siteB, 'bmc-0002'],
      ].map(async ([site, bmc]) => {
        const res = await stack
          .api('POST', `/v1/devices/${stack.deviceIds.get(bmc!)}/power`, { action: 'on' }, stack.tokens.operator)
          .then(expectStatus(202));
        return { site: site!, id: (res.body as { id: string }).id };
      }),
    );
    for (const { site, id } of jobs) {
      assert.equal((await stack.waitForJob(id)).state, 'succeeded');
      const lines = linesOf(log(), id);
      assert.ok(lines.length > 0, `no log line of job ${id}`);
      // Every line of the job is bound to the site whose worker ran it.
      for (const line of lines) assert.ok(line.includes(`"siteId":"${site}"`), line);
    }
  });

  it('drains both sites on SIGTERM and exits 0', async () => {
    assert.equal(await stack.satellite.stop(), 0);
    const lines = stack.satellite.output.split('\n');
    for (const site of [siteA, siteB])
      assert.ok(
        lines.some((l) => l.includes(`"siteId":"${site}"`) && l.includes('"msg":"site worker stopped"')),
        `site ${site} not drained`,
      );
    assert.match(stack.satellite.output, /"msg":"satellite worker stopped"/);
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { getPowerState, RedfishClient, SiteLimiter } from '../src/index.js';
import { fakeBmc, type FakeBmc } from './helpers/fake-bmc.js';
import { credentials } from './helpers/servers.js';

describe('concurrency: one request per BMC, a shared cap per site', () => {
  const bmcs: FakeBmc[] = [];
  const inFlight = new Map<string, number>();
  const peakPerBmc = new Map<string, number>();
  let siteInFlight = 0;
  let sitePeak = 0;

  before(async () => {
    for (let i = 0; i < 3; i++) {
      const bmc = await fakeBmc(credentials);
      // Slow every answer a little and count overlapping requests, per BMC and in total.
      bmc.state.intercept = async () => {
        const n = (inFlight.get(bmc.url) ?? 0) + 1;
        inFlight.set(bmc.url, n);
        peakPerBmc.set(bmc.url, Math.max(peakPerBmc.get(bmc.url) ?? 0, n));
        sitePeak = Math.max(sitePeak, ++siteInFlight);
        await new Promise((r) => setTimeout(r, 20));
        inFlight.set(bmc.url, n - 1);
        siteInFlight--;
        return false;
      };
      bmcs.push(bmc);
    }
  });
  after(() => Promise.all(bmcs.map((b) => b.close())));

  it('never overlaps requests to one BMC and never exceeds the site slots', async () => {
    const site = new SiteLimiter(2);
    const clients = bmcs.map((b) => new RedfishClient({ baseUrl: b.url, credentials, siteLimiter: site }));
    const states = await Promise.all(clients.flatMap((c) => Array.from({ length: 4 }, () => getPowerState(c))));
    await Promise.all(clients.map((c) => c.close()));
    assert.equal(states.length, 12);
    for (const b of bmcs) assert.equal(peakPerBmc.get(b.url), 1, `one at a time on ${b.url}`);
    assert.equal(sitePeak, 2, 'the site ran two BMCs in parallel, not more');
    assert.equal(site.inFlight, 0);
    assert.equal(site.queued, 0);
  });

  it('SiteLimiter: first come first served, abortable while queued', async () => {
    const site = new SiteLimiter(1);
    const order: number[] = [];
    const release = await site.acquire();
    const waiters = [1, 2, 3].map((i) => site.acquire().then((r) => (order.push(i), r())));
    const ac = new AbortController();
    const aborted = site.acquire(ac.signal);
    ac.abort(new Error('gave up'));
    await assert.rejects(aborted, /gave up/);
    release();
    await Promise.all(waiters);
    assert.deepEqual(order, [1, 2, 3]);
    assert.equal(site.inFlight, 0);
    assert.throws(() => new SiteLimiter(0), RangeError);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ListingOrder } from '../src/listing-order.js';

const page = (...ids: string[]) => ids.map((id) => ({ job: { id } }));
const idsOf = (fresh: { job: { id: string } }[]) => fresh.map((f) => f.job.id);

describe('listing order', () => {
  it('a listing older than the one that last wrote a job does not write it; newer ones do', async () => {
    const order = new ListingOrder();
    const sweep = order.begin();
    const quick = order.begin();
    assert.deepEqual(await order.write(quick, page('a', 'b'), async (fresh) => idsOf(fresh)), ['a', 'b']);
    // The sweep was listed first and writes last: only the job the quick cycle did not write is its to write.
    assert.deepEqual(await order.write(sweep, page('a', 'b', 'c'), async (fresh) => idsOf(fresh)), ['c']);
    order.end(quick);
    const later = order.begin();
    assert.deepEqual(await order.write(later, page('a', 'c'), async (fresh) => idsOf(fresh)), ['a', 'c']);
    order.end(sweep);
    order.end(later);
  });

  it('writes run one at a time, in the order they were asked for, and a failed one does not stop the next', async () => {
    const order = new ListingOrder();
    const listing = order.begin();
    const events: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const first = order.write(listing, page('a'), async () => {
      events.push('first starts');
      await held;
      events.push('first ends');
      throw new Error('transaction failed');
    });
    const second = order.write(listing, page('b'), async () => void events.push('second'));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(events, ['first starts']);
    release();
    await assert.rejects(first, /transaction failed/);
    await second;
    assert.deepEqual(events, ['first starts', 'first ends', 'second']);
    // The failed write marked nothing, so its job is still to write; the one written is not written twice.
    assert.deepEqual(await order.write(listing, page('a', 'b'), async (fresh) => idsOf(fresh)), ['a']);
    order.end(listing);
  });

  it('forgets a job once no open listing is older than the one that wrote it', async () => {
    const order = new ListingOrder();
    const old = order.begin();
    const recent = order.begin();
    await order.write(recent, page('a'), async () => undefined);
    order.end(recent);
    assert.equal(order.guarded, 1, 'the old listing is still open: the job stays guarded against it');
    order.end(old);
    assert.equal(order.guarded, 0);
  });
});

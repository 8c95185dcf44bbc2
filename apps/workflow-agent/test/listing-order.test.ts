import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ListingOrder } from '../src/listing-order.js';

interface Entry {
  job: { id: string };
  final: boolean;
}
const running = (...ids: string[]): Entry[] => ids.map((id) => ({ job: { id }, final: false }));
const ended = (...ids: string[]): Entry[] => ids.map((id) => ({ job: { id }, final: true }));
const idsOf = (entries: Entry[]) => entries.map((e) => e.job.id);
const newOrder = () => new ListingOrder<Entry>((e) => e.final);

describe('listing order', () => {
  it("an older listing's running view of a job a newer one wrote is held back; newer listings write", async () => {
    const order = newOrder();
    const sweep = order.begin();
    const quick = order.begin();
    const first = await order.write(quick, running('a', 'b'), async (fresh) => idsOf(fresh));
    assert.deepEqual(first, { result: ['a', 'b'], held: [] });
    // The sweep was listed first and writes last: only the job the quick cycle did not write is its to write.
    const second = await order.write(sweep, running('a', 'b', 'c'), async (fresh) => idsOf(fresh));
    assert.deepEqual({ result: second.result, held: idsOf(second.held) }, { result: ['c'], held: ['a', 'b'] });
    order.end(quick);
    const later = order.begin();
    assert.deepEqual((await order.write(later, running('a', 'c'), async (fresh) => idsOf(fresh))).result, ['a', 'c']);
    order.end(sweep);
    order.end(later);
  });

  it('an ended view is never held back, whatever listing wrote the job last', async () => {
    const order = newOrder();
    // A quick listing of several pages reads its last page after a sweep listing taken since.
    const quick = order.begin();
    const sweep = order.begin();
    await order.write(sweep, running('a'), async () => undefined);
    const { result, held } = await order.write(quick, ended('a'), async (fresh) => idsOf(fresh));
    assert.deepEqual({ result, held }, { result: ['a'], held: [] });
    order.end(quick);
    order.end(sweep);
  });

  it('writes run one at a time, in the order asked for, and a failed one does not stop the next', async () => {
    const order = newOrder();
    const listing = order.begin();
    const events: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const first = order.write(listing, running('a'), async () => {
      events.push('first starts');
      await held;
      events.push('first ends');
      throw new Error('transaction failed');
    });
    const second = order.write(listing, running('b'), async () => void events.push('second'));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(events, ['first starts']);
    release();
    await assert.rejects(first, /transaction failed/);
    await second;
    assert.deepEqual(events, ['first starts', 'first ends', 'second']);
    // The failed write marked nothing, so its job is still to write; the one written is not written twice.
    assert.deepEqual((await order.write(listing, running('a', 'b'), async (fresh) => idsOf(fresh))).result, ['a']);
    order.end(listing);
  });

  it('forgets a job once no open listing is older than the one that wrote it', async () => {
    const order = newOrder();
    const old = order.begin();
    const recent = order.begin();
    await order.write(recent, running('a'), async () => undefined);
    order.end(recent);
    assert.equal(order.guarded, 1, 'the old listing is still open: the job stays guarded against it');
    order.end(old);
    assert.equal(order.guarded, 0);
  });
});

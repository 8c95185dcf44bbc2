import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rackReadingsAt } from '../src/projector.js';

describe("a rack job's power readings", () => {
  it("date a running view's readings from its listing", () => {
    const listedAt = new Date('2026-12-06T10:00:05Z');
    assert.equal(+rackReadingsAt('rack-a', true, listedAt, undefined), +listedAt);
  });

  it("date an ended view's readings from the close, after any running view's written before", () => {
    // Listed running one second after the close (visibility had not shown it yet; or the agent's clock runs ahead).
    rackReadingsAt('rack-b', true, new Date('2026-12-06T10:00:01Z'), undefined);
    const at = rackReadingsAt('rack-b', false, new Date('2026-12-06T10:00:04Z'), new Date('2026-12-06T10:00:00Z'));
    assert.equal(+at, +new Date('2026-12-06T10:00:01.001Z'), "the end's readings win over the stale running ones");
    // Once ended, nothing of the job is remembered: an end alone dates from its close.
    const alone = rackReadingsAt('rack-b', false, new Date('2026-12-06T10:00:09Z'), new Date('2026-12-06T10:00:00Z'));
    assert.equal(+alone, +new Date('2026-12-06T10:00:00Z'));
  });

  it('an ended view whose running views were all listed before the close dates from the close', () => {
    rackReadingsAt('rack-c', true, new Date('2026-12-06T09:59:50Z'), undefined);
    const at = rackReadingsAt('rack-c', false, new Date('2026-12-06T10:00:04Z'), new Date('2026-12-06T10:00:00Z'));
    assert.equal(+at, +new Date('2026-12-06T10:00:00Z'));
  });
});

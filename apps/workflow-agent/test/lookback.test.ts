import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Lookback } from '../src/lookback.js';

describe('quick-cycle lookback', () => {
  it('stays at the configured lag while every end a cycle writes closed after the cycle before it started', () => {
    const lookback = new Lookback(500, 60_000);
    for (let start = 1_000_000; start < 1_010_000; start += 1000) {
      assert.equal(+lookback.since(start), start - 500);
      // The close happened during the last interval: the cycle before could not have listed it.
      lookback.quickCycle(start, start + 400);
    }
    assert.equal(lookback.currentMs, 500);
  });

  it('follows a close shown late: one that closed before the previous cycle started', () => {
    const lookback = new Lookback(500, 60_000);
    // The previous cycle started at 100 s; this one wrote an end that closed at 88 s: visibility took over 12 s.
    lookback.quickCycle(100_000, 88_000);
    assert.equal(lookback.currentMs, 18_000);
    assert.equal(+lookback.since(101_000), 83_000, 'the next window reaches back past such closes');
    // Closes keep showing up that late: the lookback holds; once they stop, it shrinks back by 2% a cycle.
    for (let i = 0; i < 100; i++) lookback.quickCycle(200_000, 188_000);
    assert.equal(lookback.currentMs, 18_000);
    lookback.quickCycle(300_000, undefined);
    assert.equal(lookback.currentMs, 17_640);
    for (let i = 0; i < 500; i++) lookback.quickCycle(300_000, undefined);
    assert.equal(lookback.currentMs, 500);
  });

  it('doubles when the sweep wrote ends the quick window had already passed, and only then; never past its cap', () => {
    const lookback = new Lookback(500, 60_000);
    lookback.since(100_000); // the window starts at 99.5 s
    assert.equal(lookback.sweepWrote([99_600, 100_200]), 0, 'ends inside the window: the quick cycles list them');
    assert.equal(lookback.currentMs, 500);
    assert.equal(lookback.sweepWrote([99_000, 99_600]), 1);
    assert.equal(lookback.currentMs, 1000);
    lookback.quickCycle(100_000, 10_000);
    assert.equal(lookback.currentMs, 60_000, 'capped');
  });
});

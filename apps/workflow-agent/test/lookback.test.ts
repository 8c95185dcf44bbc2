import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Lookback } from '../src/lookback.js';

describe('quick-cycle lookback', () => {
  it('stays at the configured lag while every end a cycle writes closed after the cycle before it started', () => {
    const lookback = new Lookback(500, 60_000);
    for (let start = 1_000_000; start < 1_010_000; start += 1000)
      lookback.quickCycle({ start, from: start - 500 }, [start + 400, start + 900]);
    assert.equal(lookback.currentMs, 500);
  });

  it("follows a close shown late: one inside the previous cycle's window, before that cycle started", () => {
    const lookback = new Lookback(500, 60_000);
    // The previous cycle (window from 80 s, started at 100 s) did not list an end that closed at 88 s.
    lookback.quickCycle({ start: 100_000, from: 80_000 }, [88_000, 100_500]);
    assert.equal(lookback.currentMs, 18_000);
    // Closes keep showing up that late: the lookback holds; once they stop, it shrinks back by 2% a cycle.
    for (let i = 0; i < 100; i++) lookback.quickCycle({ start: 200_000, from: 182_000 }, [188_000]);
    assert.equal(lookback.currentMs, 18_000);
    lookback.quickCycle({ start: 300_000, from: 282_000 }, []);
    assert.equal(lookback.currentMs, 17_640);
    for (let i = 0; i < 500; i++) lookback.quickCycle({ start: 300_000, from: 299_500 }, []);
    assert.equal(lookback.currentMs, 500);
  });

  it('does not take an end older than the previous window for a delay: that cycle never looked so far back', () => {
    const lookback = new Lookback(500, 60_000);
    // A wider window picks up an end from before the previous one's reach: its age says nothing of visibility.
    lookback.quickCycle({ start: 100_000, from: 99_500 }, [70_000]);
    assert.equal(lookback.currentMs, 500);
  });

  it('doubles once a sweep for ends the quick windows had passed when listed; never past its cap', () => {
    const lookback = new Lookback(500, 60_000);
    // A job closes at 10.2 s and shows at once; a sweep step lists it at 10.3 s, when the quick window began at
    // 9.5 s, and writes it before the quick cycle at 11 s does: the quick cycles did not miss it.
    assert.equal(Lookback.passed([10_200], 9_500), 0);
    lookback.sweepEnded(0);
    assert.equal(lookback.currentMs, 500);
    // Ends that closed before the quick window when the sweep listed them, no quick cycle having listed them.
    const missed = Lookback.passed([8_000, 9_000, 10_000], 9_500);
    assert.equal(missed, 2);
    lookback.sweepEnded(missed);
    assert.equal(lookback.currentMs, 1000);
    lookback.quickCycle({ start: 100_000, from: 0 }, [10_000]);
    assert.equal(lookback.currentMs, 60_000, 'capped');
  });
});

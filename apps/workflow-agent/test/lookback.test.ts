import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Lookback } from '../src/lookback.js';

describe('quick-cycle lookback', () => {
  it('starts at the configured lag and stays there while closes show up at once', () => {
    const lookback = new Lookback(500, 300_000);
    for (let i = 0; i < 10; i++) lookback.quickSaw(200);
    assert.equal(lookback.currentMs, 500);
  });

  it('widens past ends a sweep found that quick cycles missed, and keeps wide while closes keep coming late', () => {
    const lookback = new Lookback(500, 300_000);
    lookback.sweepFound(12_000);
    assert.equal(lookback.currentMs, 18_000);
    // The quick cycles now list the late closes themselves: their age holds the lookback up.
    for (let i = 0; i < 200; i++) lookback.quickSaw(11_000);
    assert.equal(lookback.currentMs, 16_500);
  });

  it('shrinks back once visibility catches up, and never beyond its bounds', () => {
    const lookback = new Lookback(500, 60_000);
    lookback.sweepFound(600_000);
    assert.equal(lookback.currentMs, 60_000, 'capped');
    lookback.quickSaw(0);
    assert.equal(lookback.currentMs, 58_800);
    for (let i = 0; i < 500; i++) lookback.quickSaw(0);
    assert.equal(lookback.currentMs, 500);
  });
});

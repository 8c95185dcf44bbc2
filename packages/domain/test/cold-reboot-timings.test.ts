import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ColdRebootOverrides, coldRebootTimings, nvosHelloWaits } from '../src/index.js';

describe('cold reboot timing overrides', () => {
  it('refuses NVUE hello attempts out of 1..10 or not whole, naming the field', () => {
    for (const [value, why] of [
      [1100, /at most 10 attempts/],
      [0, /at least 1 attempt/],
      [2.5, /whole number/],
    ] as const) {
      const r = ColdRebootOverrides.safeParse({ nvosHelloAttempts: value });
      assert.equal(r.success, false, `${value} refused`);
      assert.deepEqual(
        r.error!.issues.map((i) => i.path),
        [['nvosHelloAttempts']],
      );
      assert.match(r.error!.issues[0]!.message, why);
    }
    assert.equal(
      ColdRebootOverrides.safeParse({ nvosHelloAttempts: 10, nvosHelloBackoffS: 900, dischargePollMaxS: 86_400 })
        .success,
      true,
    );
  });

  it('bounds the hello backoff per key, not by the day every wait may last', () => {
    const r = ColdRebootOverrides.safeParse({ nvosHelloBackoffS: 86_400 });
    assert.deepEqual(
      r.error?.issues.map((i) => [i.path, i.message]),
      [[['nvosHelloBackoffS'], 'at most 900 s between two NVUE hellos']],
    );
  });

  it('waits the RMS backoff between hellos by default, each wait capped, always a finite number of seconds', () => {
    const t = coldRebootTimings();
    assert.deepEqual(nvosHelloWaits(t.nvosHelloAttempts, t.nvosHelloBackoffS), [30, 60, 120, 240]);
    assert.deepEqual(nvosHelloWaits(10, 30), [30, 60, 120, 240, 480, 900, 900, 900, 900]);
    // Timings stored before the bounds existed (a queued job) still give a plan a durable timer can take.
    const old = nvosHelloWaits(1100, 86_400);
    assert.equal(old.length, 9);
    assert.ok(old.every((s) => Number.isFinite(s) && s <= 900));
    assert.deepEqual(nvosHelloWaits(1, 30), []);
  });
});

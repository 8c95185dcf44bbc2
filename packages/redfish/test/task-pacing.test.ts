import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RedfishClient, TaskPollPacer, waitForTask } from '../src/index.js';
import { credentials, json, serve } from './helpers/servers.js';

describe('TaskPollPacer: the next poll of a running task', () => {
  it('keeps the interval while the rest of the task is longer than one, and polls when it should end after', () => {
    const pacer = new TaskPollPacer(1000);
    // A 3 s flash reporting whole tens of percent (the simulator's ten steps): 30 % at 1 s, 60 % at 2 s.
    assert.equal(pacer.next(0, 0), 1000);
    assert.equal(pacer.next(1000, 30), 1000);
    assert.equal(pacer.next(2000, 60), 1000);
    // Late under load, the 3 s poll sees 90 %: at that pace the rest is 333 ms, not another interval.
    assert.equal(pacer.next(3000, 90), 333);
  });

  it('never polls sooner than a quarter interval', () => {
    const pacer = new TaskPollPacer(1000);
    pacer.next(0, 0);
    assert.equal(pacer.next(1000, 99), 250);
  });

  it('after an early poll that found the task running, polls when the interval would have: never later than it', () => {
    const pacer = new TaskPollPacer(1000);
    pacer.next(0, 0);
    assert.equal(pacer.next(3000, 90), 333);
    // Still 90 %: no progress, so no estimate; the next poll is at 4000, where the interval's poll was due.
    assert.equal(pacer.next(3333, 90), 667);
    // A task stuck near its end is polled at the interval, not hammered.
    assert.equal(pacer.next(4000, 90), 1000);
    assert.equal(pacer.next(5000, 95), 263);
  });

  it('keeps the interval without PercentComplete, or with values that are not a percentage', () => {
    const pacer = new TaskPollPacer(1000);
    assert.equal(pacer.next(0, 10), 1000);
    for (const [at, p] of [
      [1000, undefined],
      [2000, Number.NaN],
      [3000, -5],
      [4000, 100],
      [5000, 250],
      [6000, Number.POSITIVE_INFINITY],
    ] as const)
      assert.equal(pacer.next(at, p), 1000, `${p} at ${at}`);
  });

  it('times a task whose progress went back afresh, and one first seen part-way from where it was seen', () => {
    const pacer = new TaskPollPacer(1000);
    pacer.next(0, 50);
    // 10 % a second from 60 %: 4 s to go.
    assert.equal(pacer.next(1000, 60), 1000);
    // Restarted: its first reading again.
    assert.equal(pacer.next(2000, 10), 1000);
    assert.equal(pacer.next(3000, 55), 1000);
    assert.equal(pacer.next(4000, 85), 400);
  });

  it('times afresh a task that went back below its last reading, not only below its first', () => {
    const pacer = new TaskPollPacer(1000);
    pacer.next(0, 0);
    assert.equal(pacer.next(1000, 50), 1000);
    // Back to 20 %: restarted after 50 %. From there, 60 % a second: 333 ms to go (the pace since 0 says 750).
    assert.equal(pacer.next(2000, 20), 1000);
    assert.equal(pacer.next(3000, 80), 333);
  });
});

describe('waitForTask paced by the task', () => {
  it('sees the end of a task that keeps its pace well before the next whole interval', async () => {
    // A task reporting its progress as the time it has run over 2.5 s (from its first poll), in whole tens; polled
    // every second.
    let started: number | undefined;
    const polls: number[] = [];
    const bmc = await serve((_req, res) => {
      started ??= Date.now();
      const ms = Date.now() - started;
      polls.push(ms);
      if (ms >= 2500) return json(res, 200, { TaskState: 'Completed', TaskStatus: 'OK', PercentComplete: 100 });
      json(res, 200, { TaskState: 'Running', PercentComplete: Math.floor(ms / 250) * 10 });
    });
    const client = new RedfishClient({ baseUrl: bmc.url, credentials });
    try {
      const result = await waitForTask(client, '/redfish/v1/TaskService/Tasks/1', { pollIntervalMs: 1000 });
      assert.equal(result.outcome, 'succeeded');
      // At the interval, the end is seen at about 3 s (500 ms late); at the task's pace, the poll that reads 80 or 90 %
      // sets the next for when it ends. Late timers move polls later, which the margin allows for.
      const late = polls.at(-1)! - 2500;
      assert.ok(late >= 0 && late < 450, `the end was seen ${late} ms after it (polls at ${polls.join(', ')} ms)`);
    } finally {
      await client.close();
      await bmc.close();
    }
  });
});

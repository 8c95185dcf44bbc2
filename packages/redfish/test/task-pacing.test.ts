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

  it('goes back to the interval when a poll saw no progress, so a task stuck near its end is not hammered', () => {
    const pacer = new TaskPollPacer(1000);
    pacer.next(0, 0);
    assert.equal(pacer.next(3000, 90), 333);
    assert.equal(pacer.next(3333, 90), 1000);
    assert.equal(pacer.next(4333, 90), 1000);
    assert.equal(pacer.next(5333, 95), 281);
  });

  it('keeps the interval without PercentComplete, or with values that are not a percentage', () => {
    const pacer = new TaskPollPacer(1000);
    for (const [at, p] of [
      [0, undefined],
      [1000, undefined],
      [2000, Number.NaN],
      [3000, -5],
      [4000, 100],
      [5000, 250],
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
});

describe('waitForTask paced by the task', () => {
  it('sees the end of a task that keeps its pace well before the next whole interval', async () => {
    // A task reporting its progress as the time it has run over 2.5 s, in whole tens; polled every second.
    const started = Date.now();
    const polls: number[] = [];
    const bmc = await serve((_req, res) => {
      const ms = Date.now() - started;
      polls.push(ms);
      if (ms >= 2500) return json(res, 200, { TaskState: 'Completed', TaskStatus: 'OK', PercentComplete: 100 });
      json(res, 200, { TaskState: 'Running', PercentComplete: Math.floor(ms / 250) * 10 });
    });
    const client = new RedfishClient({ baseUrl: bmc.url, credentials });
    try {
      const result = await waitForTask(client, '/redfish/v1/TaskService/Tasks/1', { pollIntervalMs: 1000 });
      assert.equal(result.outcome, 'succeeded');
      // At a fixed interval the end would be seen at 3 s (the fourth poll); at the task's pace, one poll reads 80 %
      // at about 2 s and the next comes half a second later. Late timers only move polls later, so allow for them
      // up to 400 ms.
      const [, , third, fourth] = polls;
      assert.ok(third !== undefined && fourth !== undefined, `polls at ${polls.join(', ')} ms`);
      assert.ok(fourth - third < 900, `the last poll waited ${fourth - third} ms (polls at ${polls.join(', ')} ms)`);
      assert.ok(polls.at(-1)! >= 2500);
    } finally {
      await client.close();
      await bmc.close();
    }
  });
});

import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ActionJournal, journalKey } from '../src/journal/action-journal.js';

const day = 86_400_000;
const fresh = () => join(mkdtempSync(join(tmpdir(), 'fleet-journal-')), 'action-journal.jsonl');

describe('action journal', () => {
  it('keeps what was sent across a restart, by activity', async () => {
    const path = fresh();
    const key = journalKey({ workflowExecution: { workflowId: 'w', runId: 'r' }, activityId: '3' });
    const before = await ActionJournal.open(path, { keepMs: day });
    assert.equal(before.sent(key), undefined);
    await before.record({ key, deviceId: 'dev-1', action: 'reset:PowerCycle' });
    await before.close();

    const after = await ActionJournal.open(path, { keepMs: day });
    assert.equal(after.sent(key)?.action, 'reset:PowerCycle');
    assert.equal(after.sent(key)?.deviceId, 'dev-1');
    const otherRun = journalKey({ workflowExecution: { workflowId: 'w', runId: 'r2' }, activityId: '3' });
    assert.equal(after.sent(otherRun), undefined, 'another run of the workflow is another activity');
    await after.close();
  });

  it('drops entries older than it keeps, and a line a crash cut short, when it opens', async () => {
    const path = fresh();
    const old = { key: 'w/r/1', deviceId: 'd', action: 'reset:On', at: Date.now() - 2 * day };
    const recent = { key: 'w/r/2', deviceId: 'd', action: 'reset:On', at: Date.now() - 1_000 };
    writeFileSync(path, `${JSON.stringify(old)}\n${JSON.stringify(recent)}\n`);
    appendFileSync(path, '{"key":"w/r/3","devi');
    const journal = await ActionJournal.open(path, { keepMs: day });
    assert.equal(journal.sent('w/r/1'), undefined);
    assert.equal(journal.sent('w/r/2')?.at, recent.at);
    assert.equal(journal.sent('w/r/3'), undefined);
    await journal.record({ key: 'w/r/4', deviceId: 'd', action: 'manager-reset:bmc' });
    await journal.close();
    const lines = readFileSync(path, 'utf8').trim().split('\n');
    assert.deepEqual(
      lines.map((l) => (JSON.parse(l) as { key: string }).key),
      ['w/r/2', 'w/r/4'],
      'compacted to what is kept, then appended',
    );
  });

  it('an activity outside a workflow has no key', () => {
    assert.throws(() => journalKey({ activityId: '1' }), /outside a workflow/);
  });
});

describe('action journal: exclusive', () => {
  it('runs the callers of one key one after the other, other keys alongside, and goes on after a failure', async () => {
    const journal = await ActionJournal.open(fresh(), { keepMs: day });
    const order: string[] = [];
    const step =
      (name: string, ms: number, fail = false) =>
      async () => {
        order.push(`${name} in`);
        await new Promise((r) => setTimeout(r, ms));
        order.push(`${name} out`);
        if (fail) throw new Error(name);
        return name;
      };
    const results = await Promise.allSettled([
      journal.exclusive('k', step('a', 30, true)),
      journal.exclusive('k', step('b', 5)),
      journal.exclusive('other', step('c', 5)),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'fulfilled', 'fulfilled'],
    );
    assert.ok(order.indexOf('a out') < order.indexOf('b in'), `one key in turn: ${order.join(', ')}`);
    assert.ok(order.indexOf('c in') < order.indexOf('a out'), `other keys alongside: ${order.join(', ')}`);
    await journal.close();
  });
});

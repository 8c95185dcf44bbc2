import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  defaultSlaPolicy,
  jobKinds,
  judgeSla,
  slaKey,
  slaLimit,
  slaPolicyWith,
  slaStage,
  watchedSlas,
} from '../src/index.js';

describe('stuck-state SLAs', () => {
  const since = new Date('2026-12-04T10:00:00Z');
  const at = (s: number) => new Date(since.getTime() + s * 1000);

  it('an object is breached once it has been in its state longer than the limit, and says by how much', () => {
    assert.deepEqual(judgeSla(7200, since, at(7200)), {
      breached: false,
      limitS: 7200,
      dueAt: at(7200),
      overdueS: 0,
    });
    const late = judgeSla(7200, since, at(7200 + 90))!;
    assert.equal(late.breached, true);
    assert.equal(late.overdueS, 90);
    assert.equal(judgeSla(7200, since, at(100))!.overdueS, -7100, 'negative: the time left');
    assert.equal(judgeSla(null, since, at(1e9)), undefined, 'not watched');
  });

  it('a stage is its first word, so each wave of a campaign has the wave limit anew', () => {
    assert.equal(slaStage('wave 2/5'), 'wave');
    assert.equal(slaStage('awaiting_approval'), 'awaiting_approval');
    const wave = { watch: 'job_stage', kind: 'firmware.campaign', stage: 'wave 2/5' } as const;
    assert.equal(slaKey(wave), 'job_stage:firmware.campaign:wave');
    assert.equal(slaLimit(defaultSlaPolicy, wave), 12 * 3600);
    assert.equal(slaLimit(defaultSlaPolicy, { ...wave, stage: 'done' }), null);
  });

  it('overrides replace a limit, null stops watching, and a job kind the defaults do not name has the default', () => {
    const p = slaPolicyWith({
      lifecycle: { enrolling: 5, quarantined: null },
      jobRunning: { 'device.power': null },
      jobStages: { 'firmware.campaign': { paused: 60 } },
    });
    assert.equal(slaLimit(p, { watch: 'lifecycle', state: 'enrolling' }), 5);
    assert.equal(slaLimit(p, { watch: 'lifecycle', state: 'quarantined' }), null);
    assert.equal(slaLimit(p, { watch: 'lifecycle', state: 'burning_in' }), 12 * 3600, 'the others stay');
    assert.equal(slaLimit(p, { watch: 'job_running', kind: 'device.power' }), null);
    assert.equal(slaLimit(p, { watch: 'job_stage', kind: 'firmware.campaign', stage: 'paused' }), 60);
    assert.equal(
      slaLimit(p, { watch: 'job_stage', kind: 'firmware.campaign', stage: 'canary' }),
      6 * 3600,
      "a kind's other stages stay",
    );
    const running = watchedSlas(defaultSlaPolicy).filter((w) => w.subject.watch === 'job_running');
    const named = new Set(running.map((w) => (w.subject.watch === 'job_running' ? w.subject.kind : '')));
    assert.deepEqual(
      jobKinds.filter((k) => !named.has(k)),
      ['firmware.campaign'],
      'every kind is watched but the campaign, whose phases are',
    );
    const keys = watchedSlas(defaultSlaPolicy).map((w) => slaKey(w.subject));
    assert.equal(new Set(keys).size, keys.length, 'one key per watched subject');
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { NvosSimulator } from '@fleet/simulators';
import {
  applyConfig,
  changePassword,
  classifyRevision,
  getSystem,
  NvueError,
  parseRevision,
  revisionIdFrom,
} from '../src/index.js';
import { clientFor, fast, PASSWORD, requests, startSim } from './helpers.js';

const APPLY = { state: 'apply', 'auto-prompt': { ays: 'ays_yes' } };
const SAVE = { state: 'save', 'auto-prompt': { ays: 'ays_yes' } };

describe('revisions against the NVOS simulator', () => {
  let sim: NvosSimulator;
  before(async () => {
    sim = await startSim([{ id: 'r1' }, { id: 'r2' }, { id: 'r3' }]);
  });
  after(() => sim.close());

  it('changes a password with create → stage → apply → poll → save, sending exactly the NVUE bodies', async () => {
    const c = clientFor(sim, 'r1');
    const other = clientFor(sim, 'r1');
    try {
      const result = await changePassword(c, 'admin', 'n3w-secret', fast);
      assert.equal(result.noDiff, false);
      const log = requests(sim, 'r1');
      const rev = result.revision;
      assert.deepEqual(log[0], { line: 'POST /nvue_v1/revision', status: 200, body: {} });
      assert.deepEqual(log[1], {
        line: `PATCH /nvue_v1/system/aaa/user/admin?rev=${rev}`,
        status: 200,
        body: { password: '***' },
      });
      assert.deepEqual(log[2], { line: `PATCH /nvue_v1/revision/${rev}`, status: 200, body: APPLY });
      assert.ok(
        log.slice(3, -1).every((r) => r.line === `GET /nvue_v1/revision/${rev}`),
        JSON.stringify(log),
      );
      assert.ok(
        log.slice(3, -1).some((r) => r.status === 401),
        'the old password stopped working mid-apply',
      );
      assert.deepEqual(log.at(-1), { line: 'PATCH /nvue_v1/revision/applied', status: 200, body: SAVE });
      // The client moved to the new password; a client with the old one is refused, for good.
      await getSystem(c);
      const refused = await getSystem(other).catch((e: unknown) => e);
      assert.ok(refused instanceof NvueError);
      assert.equal(refused.kind, 'Unauthenticated');
      assert.equal(refused.retryable, false);
      assert.equal(sim.switch('r1').counters.passwordChanges, 1);
      assert.equal(sim.switch('r1').counters.saves, 1);
      assert.equal(
        sim.switch('r1').checkPassword('admin', 'n3w-secret'),
        true,
        'sent base64-encoded, stored as the password',
      );
    } finally {
      await c.close();
      await other.close();
    }
  });

  it('surfaces the transition issues of a failed apply in a typed error and saves nothing', async () => {
    sim.switch('r2').setFaults({ revisionApplyFails: 'Invalid config: gnmi-server port 9339 in use' });
    const c = clientFor(sim, 'r2');
    try {
      const err = await applyConfig(c, [{ path: '/system/gnmi-server', body: { state: 'enabled' } }], fast).catch(
        (e: unknown) => e,
      );
      assert.ok(err instanceof NvueError, String(err));
      assert.equal(err.kind, 'ApplyFailed');
      assert.equal(err.switchId, 'r2');
      assert.deepEqual(err.issues, ['Invalid config: gnmi-server port 9339 in use']);
      assert.match(
        err.message,
        new RegExp(
          /^ApplyFailed: r2 GET \/nvue_v1\/revision\/\d+: revision \d+ failed: /.source +
            /Invalid config: gnmi-server port 9339 in use$/.source,
        ),
      );
      assert.ok(!requests(sim, 'r2').some((r) => r.line.includes('/revision/applied')), 'no save after a failed apply');
    } finally {
      sim.switch('r2').setFaults({});
      await c.close();
    }
  });

  it('takes "config apply executed with no config diff" as success, and still saves', async () => {
    const c = clientFor(sim, 'r3');
    try {
      const change = [{ path: '/system/gnmi-server', body: { state: 'enabled' } }];
      assert.equal((await applyConfig(c, change, fast)).noDiff, false);
      assert.equal((await applyConfig(c, change, fast)).noDiff, true);
      assert.equal(requests(sim, 'r3').filter((r) => r.line === 'PATCH /nvue_v1/revision/applied').length, 2);
      // Rotating to the password it already has is the same no-op.
      assert.equal((await changePassword(c, 'admin', PASSWORD, fast)).noDiff, true);
    } finally {
      await c.close();
    }
  });
});

describe('revision shapes', () => {
  it('reads the revision id from the shapes NVUE builds answer with', () => {
    assert.equal(revisionIdFrom('7'), '7');
    assert.equal(revisionIdFrom(7), '7');
    assert.equal(revisionIdFrom({ id: 8 }), '8');
    assert.equal(revisionIdFrom({ rev: '9' }), '9');
    assert.equal(
      revisionIdFrom({ 'changeset/cumulus/2024-01-01_10.00.00_AB12': { state: 'pending', transition: { issue: {} } } }),
      'changeset/cumulus/2024-01-01_10.00.00_AB12',
    );
    assert.equal(revisionIdFrom({ a: 1, b: 2 }), undefined);
    assert.equal(revisionIdFrom(''), undefined);
  });

  it('classifies states, with the no-diff issue winning over a failed state', () => {
    const r = (state: string, ...messages: string[]) =>
      parseRevision({
        state,
        transition: {
          issue: Object.fromEntries(
            messages.map((m, i) => [String(i).padStart(5, '0'), { message: m, severity: 'info' }]),
          ),
        },
      });
    assert.equal(classifyRevision(r('applied')), 'applied');
    assert.equal(classifyRevision(r('applying')), 'pending');
    assert.equal(classifyRevision(r('pending')), 'pending');
    for (const s of ['failed', 'error', 'invalid', 'apply_fail'])
      assert.equal(classifyRevision(r(s, 'boom')), 'failed', s);
    assert.equal(classifyRevision(r('invalid', 'Config apply executed with no config diff')), 'no-diff');
    assert.equal(classifyRevision(r('failed', 'warning: x', 'config apply executed with no config diff')), 'no-diff');
    assert.deepEqual(
      parseRevision({
        state: 'failed',
        transition: { issue: { '00001': { message: 'second' }, '00000': { message: 'first' } } },
      }).issues,
      ['first', 'second'],
    );
  });
});

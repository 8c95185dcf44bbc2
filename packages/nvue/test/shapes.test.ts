import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  actionIdFrom,
  assertImageFilename,
  buildIdFromFilename,
  classifyAction,
  normaliseImage,
  parseAction,
} from '../src/index.js';

describe('NVUE answer shapes', () => {
  it('finds the action id in every shape NVUE answers with', () => {
    const id = (body: unknown, headers: Record<string, string> = {}) => actionIdFrom({ body, headers });
    assert.equal(id('15'), '15');
    assert.equal(id(' 15\n'), '15', 'a bare text/plain id');
    assert.equal(id(15), '15');
    for (const key of ['id', 'Id', 'action-id', 'actionId', 'job_id', 'JobId'])
      assert.equal(id({ [key]: 21 }), '21', key);
    assert.equal(id({ '@odata.id': '/nvue_v1/action/22' }), '22');
    assert.equal(id({ href: '/nvue_v1/action/23/' }), '23');
    assert.equal(id({ location: '/nvue_v1/action/24?x=1' }), '24');
    assert.equal(id({}, { location: '/nvue_v1/action/25' }), '25');
    assert.equal(id({ state: 'start' }), undefined);
  });

  it('reads percent from percentage, percent or PercentComplete, and issues from a list or a map', () => {
    assert.equal(parseAction({ state: 'action_running', percentage: 40 }).percent, 40);
    assert.equal(parseAction({ state: 'action_running', percent: '55' }).percent, 55);
    assert.equal(parseAction({ state: 'action_running', PercentComplete: 70 }).percent, 70);
    assert.equal(parseAction({ state: 'start' }).percent, undefined);
    assert.deepEqual(parseAction({ issue: ['a', { message: 'b' }] }).issues, ['a', 'b']);
    assert.deepEqual(parseAction({ issue: { 0: { message: 'c' } } }).issues, ['c']);
  });

  it('classifies action states; action_error at 100% is success only for an install', () => {
    const a = (state: string, percentage?: number, extra: object = {}) => parseAction({ state, percentage, ...extra });
    for (const s of ['start', 'inactive', 'action_running', 'running'])
      assert.equal(classifyAction(a(s)), 'pending', s);
    assert.equal(classifyAction(a('action_success', 100)), 'succeeded');
    assert.equal(classifyAction(a('action_failed', 30)), 'failed');
    assert.equal(classifyAction(a('action_error', 100)), 'failed');
    assert.equal(classifyAction(a('action_error', 100), true), 'handoff');
    assert.equal(classifyAction(a('action_error', 60), true), 'failed');
    assert.equal(classifyAction(a('action_success', 100, { 'http-status': 500 })), 'failed');
    assert.equal(classifyAction(a('paused')), 'unknown');
  });

  it('normalises system/image from both shapes and from partition numbers', () => {
    assert.deepEqual(
      normaliseImage({
        current: 'partition2',
        next: 'partition1',
        partition1: { 'build-id': '25.02.1' },
        partition2: { 'build-id': '25.02.2' },
        'issu-status': 'disabled',
      }),
      {
        current: '25.02.2',
        next: '25.02.1',
        partitions: { 1: '25.02.1', 2: '25.02.2' },
        issuStatus: 'disabled',
      },
    );
    assert.deepEqual(
      normaliseImage({ current: '25.02.1', next: '25.02.2', partition1: '25.02.1', partition2: '25.02.2' }),
      { current: '25.02.1', next: '25.02.2', partitions: { 1: '25.02.1', 2: '25.02.2' } },
    );
    assert.deepEqual(
      normaliseImage({ current: '1', next: '2', partition1: '25.02.1', partition2: { 'build-id': '25.02.2' } }),
      { current: '25.02.1', next: '25.02.2', partitions: { 1: '25.02.1', 2: '25.02.2' } },
    );
    assert.deepEqual(normaliseImage({}), { current: undefined, next: undefined, partitions: {} });
  });

  it('applies NVOS file name rules and infers the build id', () => {
    assert.equal(buildIdFromFilename('nvos-amd64-25.02.4282.bin'), '25.02.4282');
    assert.throws(() => buildIdFromFilename('nvos-amd64.bin'), /exactly one X\.Y\.Z, found 0/);
    assert.throws(() => buildIdFromFilename('nvos-1.2.3-25.02.4282.bin'), /found 2/);
    assert.throws(() => assertImageFilename('.nvos-25.02.4282.bin'), /hidden/);
    assert.throws(() => assertImageFilename('../etc/passwd'), RangeError);
    assert.throws(() => assertImageFilename('nvos 25.02.4282.bin'), RangeError);
    assert.doesNotThrow(() => assertImageFilename('nvos_amd64-25.02.4282.bin'));
  });
});

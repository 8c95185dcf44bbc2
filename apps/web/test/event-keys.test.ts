import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { keysFor } from '../src/api/event-keys.js';

const event = (type: string, data: Record<string, unknown>) => ({ id: '1', event: type, data: JSON.stringify(data) });

describe('the queries an event makes stale', () => {
  it('a day-2 event refetches its own views: health the device health card, the others their lists and pages', () => {
    assert.deepEqual(keysFor(event('health', { type: 'health', id: 'd1', device_id: 'd1' })), [
      ['device', 'd1', 'health'],
    ]);
    assert.deepEqual(keysFor(event('sla_breach', { type: 'sla_breach', id: 'b1', object_id: 'd1' })), [
      ['sla-breaches'],
    ]);
    assert.deepEqual(keysFor(event('facility_event', { type: 'facility_event', id: 'f1' })), [['facility-events']]);
    assert.deepEqual(keysFor(event('rma', { type: 'rma', id: 'c1', device_id: 'd1' })), [['rma']]);
  });

  it('a device event still refetches the device and its lists; an unknown event nothing', () => {
    assert.deepEqual(keysFor(event('device', { type: 'device', id: 'd1' })).at(-1), ['device', 'd1']);
    assert.deepEqual(keysFor({ id: '2', event: 'job', data: 'j1' }).at(-1), ['job', 'j1']);
    assert.deepEqual(keysFor(event('rack', { id: 'r1' })), []);
  });
});

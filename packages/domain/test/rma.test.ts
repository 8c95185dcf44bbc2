import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  lifecycleRule,
  nextRmaStates,
  partSwaps,
  rmaRefusal,
  rmaReturnFrom,
  rmaShipFrom,
  rmaStates,
  rmaTable,
  serialsOfRecord,
  type HardwareRecord,
} from '../src/index.js';

describe('RMA cases', () => {
  it('walks open → shipped → replaced → revalidating → closed, each move by its one mover', () => {
    const line = ['open', 'shipped', 'replaced', 'revalidating', 'closed'] as const;
    const movers = ['operator', 'operator', 'enrolment', 'enrolment'] as const;
    for (let i = 0; i < movers.length; i++) {
      assert.equal(rmaRefusal(line[i]!, line[i + 1]!, movers[i]!), undefined, `${line[i]} → ${line[i + 1]}`);
      const other = movers[i] === 'operator' ? 'enrolment' : 'operator';
      assert.ok(rmaRefusal(line[i]!, line[i + 1]!, other), `${other} may not move ${line[i]} → ${line[i + 1]}`);
    }
    assert.deepEqual(nextRmaStates('open', 'operator'), ['shipped', 'closed']);
    assert.deepEqual(nextRmaStates('revalidating', 'operator'), ['shipped'], 'a failed return goes back');
    assert.deepEqual(nextRmaStates('closed', 'operator'), []);
    assert.match(rmaRefusal('open', 'replaced', 'operator')!, /case is open: it cannot move to replaced/);
    assert.match(rmaRefusal('closed', 'open', 'operator')!, /closed is final/);
    assert.match(rmaRefusal('replaced', 'revalidating', 'operator')!, /by itself/);
    for (const rule of rmaTable) for (const from of rule.from) assert.ok(rmaStates.includes(from));
  });

  it('ships and returns devices only where the lifecycle table moves them', () => {
    for (const from of rmaShipFrom) assert.ok(lifecycleRule(from, 'rma'));
    assert.deepEqual([...rmaReturnFrom], ['rma']);
    assert.ok(lifecycleRule('rma', 'discovered'));
  });

  it('names the parts whose serial changed, and none without a read before', () => {
    const record = (gpu1: string, tray = 'T1'): HardwareRecord => ({
      readAt: '2025-01-01T00:00:00.000Z',
      document: { digest: 'sha256:00', bytes: 1, resources: 1 },
      serialNumber: tray,
      parts: [
        { id: 'GPU_0', kind: 'gpu', serialNumber: 'G0' },
        { id: 'GPU_1', kind: 'gpu', serialNumber: gpu1 },
        { id: 'CPU_0', kind: 'cpu' },
      ],
      nics: 0,
      firmwareComponents: 0,
      nvlinkPorts: 0,
      differences: [],
    });
    const before = serialsOfRecord(record('G1'));
    assert.deepEqual(before, { tray: 'T1', GPU_0: 'G0', GPU_1: 'G1' });
    assert.deepEqual(partSwaps(before, serialsOfRecord(record('G1-new'))), [
      { part: 'GPU_1', old: 'G1', new: 'G1-new' },
    ]);
    assert.deepEqual(partSwaps(before, serialsOfRecord(record('G1', 'T2'))), [{ part: 'tray', old: 'T1', new: 'T2' }]);
    assert.deepEqual(partSwaps(before, { tray: 'T1', GPU_0: 'G0' }), [{ part: 'GPU_1', old: 'G1', new: null }]);
    assert.deepEqual(partSwaps(before, before), []);
    assert.deepEqual(partSwaps({}, before), [], 'nothing known before: no swap named');
  });
});

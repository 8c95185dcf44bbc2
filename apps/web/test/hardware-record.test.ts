import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hardwareSummary } from '../src/api/hardware-record.js';

describe('hardware record as the console reads it', () => {
  it('reads the identity, counts, parts and profile differences an enrolment wrote', () => {
    const h = hardwareSummary({
      readAt: '2025-01-01T00:00:00.000Z',
      document: { digest: 'sha256:ab', bytes: 10, resources: 1 },
      manufacturer: 'NVIDIA',
      model: 'GB200 NVL',
      partNumber: '699-24975-0001-000',
      serialNumber: '1320225000001',
      cpuCount: 2,
      gpuCount: 4,
      memoryGiB: 960,
      parts: [
        { id: 'GPU_0', kind: 'gpu', model: 'GB200', serialNumber: '1654' },
        { id: 'CPU_0', kind: 'cpu' },
      ],
      nics: 2,
      differences: [
        { code: 'health', subject: 'GPU_2', expected: 'OK', actual: 'Critical', message: 'GPU_2 is Critical: XID 79' },
      ],
    });
    assert.equal(h.manufacturer, 'NVIDIA');
    assert.equal(h.model, 'GB200 NVL');
    assert.equal(h.partNumber, '699-24975-0001-000');
    assert.deepEqual([h.cpuCount, h.gpuCount, h.memoryGiB, h.gpuMemoryGiB], [2, 4, 960, undefined]);
    assert.deepEqual(
      h.parts.map((p) => [p.id, p.kind, p.model, p.serialNumber]),
      [
        ['GPU_0', 'gpu', 'GB200', '1654'],
        ['CPU_0', 'cpu', undefined, undefined],
      ],
    );
    assert.deepEqual(h.differences, [
      { code: 'health', subject: 'GPU_2', expected: 'OK', actual: 'Critical', message: 'GPU_2 is Critical: XID 79' },
    ]);
  });

  it('leaves out what is missing, blank or of another type instead of showing it', () => {
    const h = hardwareSummary({
      model: '',
      gpuCount: '4',
      memoryGiB: Number.NaN,
      parts: [null, 'GPU_0', { kind: 'gpu' }, { id: 'PSU_1', kind: 7, partNumber: '' }],
      differences: { code: 'model' },
    });
    assert.equal(h.model, undefined);
    assert.equal(h.gpuCount, undefined);
    assert.equal(h.memoryGiB, undefined);
    assert.deepEqual(
      h.parts.map((p) => [p.id, p.kind, p.partNumber]),
      [['PSU_1', 'part', undefined]],
    );
    assert.deepEqual(h.differences, []);
    assert.deepEqual(
      hardwareSummary({ differences: [{ code: 'model' }] }).differences,
      [],
      'a difference needs a message',
    );
  });
});

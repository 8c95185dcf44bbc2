import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  applyCondition,
  assertAxisWriter,
  axesOf,
  axisTable,
  axisWriter,
  axisWriters,
  AxisWriterRefused,
  conditionReportProblem,
  conditionTypes,
  conditionWriter,
  deviceAxes,
  isReason,
  type ConditionReport,
  type DeviceCondition,
} from '../src/index.js';

describe('status axes and their writers', () => {
  it('gives each axis exactly the writer the issue names', () => {
    assert.deepEqual(Object.fromEntries(deviceAxes.map((a) => [a, axisWriter(a)])), {
      inventory: 'netbox-agent',
      power: 'satellite',
      health: 'satellite',
      firmware: 'firmware-refresh',
      burnin: 'burn-in-workflow',
      lifecycle: 'lifecycle-workflow',
    });
    assert.deepEqual(Object.keys(axisTable).sort(), [...deviceAxes].sort());
  });

  it('leaves no writer without an axis', () => {
    for (const w of axisWriters) assert.ok(axesOf(w).length > 0, w);
    assert.deepEqual(axesOf('satellite'), ['power', 'health']);
  });

  it('refuses every writer but the owner on every axis', () => {
    for (const axis of deviceAxes)
      for (const writer of axisWriters) {
        if (writer === axisWriter(axis)) {
          assert.doesNotThrow(() => assertAxisWriter(axis, writer));
          continue;
        }
        assert.throws(
          () => assertAxisWriter(axis, writer),
          (e: unknown) =>
            e instanceof AxisWriterRefused &&
            e.code === 'PERMISSION_DENIED' &&
            e.axis === axis &&
            e.writer === writer &&
            e.owner === axisWriter(axis) &&
            e.message === `${writer} may not write the ${axis} axis: its only writer is ${axisWriter(axis)}`,
        );
      }
    assert.throws(() => assertAxisWriter('power', 'hub'), AxisWriterRefused);
  });

  it('gives each condition type the writer of its axis', () => {
    assert.deepEqual(Object.fromEntries(conditionTypes.map((t) => [t, conditionWriter(t)])), {
      BMCReachable: 'satellite',
      CredentialsVerified: 'satellite',
      InventoryMatchesProfile: 'netbox-agent',
      FirmwareCompliant: 'firmware-refresh',
      BurnInPassed: 'burn-in-workflow',
      Schedulable: 'lifecycle-workflow',
      Healthy: 'satellite',
    });
  });
});

describe('conditions', () => {
  const t0 = new Date('2031-01-01T00:00:00.000Z');
  const t1 = new Date('2031-01-01T00:05:00.000Z');
  const t2 = new Date('2031-01-01T00:10:00.000Z');
  const report = (over: Partial<ConditionReport> = {}): ConditionReport => ({
    type: 'BMCReachable',
    status: 'True',
    reason: 'RedfishAnswered',
    message: '',
    observedGeneration: 1,
    ...over,
  });

  it('stamps a new condition with the time it was first reported', () => {
    const r = applyCondition(undefined, report(), t0);
    assert.deepEqual(r, { condition: { ...report(), lastTransitionTime: t0 }, transitioned: true, stale: false });
  });

  it('keeps lastTransitionTime when only reason, message or generation change', () => {
    const first = applyCondition(undefined, report(), t0).condition;
    const r = applyCondition(first, report({ reason: 'SessionReused', message: 'again', observedGeneration: 2 }), t1);
    assert.equal(r.transitioned, false);
    assert.deepEqual(r.condition, {
      ...report({ reason: 'SessionReused', message: 'again', observedGeneration: 2 }),
      lastTransitionTime: t0,
    });
  });

  it('moves lastTransitionTime when the status changes, through Unknown too', () => {
    let c: DeviceCondition = applyCondition(undefined, report(), t0).condition;
    const down = applyCondition(c, report({ status: 'False', reason: 'ConnectionRefused' }), t1);
    assert.equal(down.transitioned, true);
    assert.equal(down.condition.lastTransitionTime, t1);
    c = down.condition;
    const unknown = applyCondition(c, report({ status: 'Unknown', reason: 'SatelliteOffline' }), t2);
    assert.equal(unknown.transitioned, true);
    assert.equal(unknown.condition.lastTransitionTime, t2);
  });

  it('ignores a report about an older generation than the stored one', () => {
    const stored = applyCondition(undefined, report({ observedGeneration: 5 }), t0).condition;
    const r = applyCondition(stored, report({ status: 'False', reason: 'Late', observedGeneration: 4 }), t1);
    assert.deepEqual(r, { condition: stored, transitioned: false, stale: true });
  });

  it('refuses to overwrite one condition type with another', () => {
    const stored = applyCondition(undefined, report(), t0).condition;
    assert.throws(() => applyCondition(stored, report({ type: 'Schedulable' }), t1), /cannot replace BMCReachable/);
  });

  it('accepts CamelCase reasons only', () => {
    for (const ok of ['BurnInPassed', 'A', 'Nvl72Profile']) assert.equal(isReason(ok), true, ok);
    for (const bad of ['', 'burnInPassed', 'Burn in', 'Burn_In', 'Burn-In', 'X'.repeat(1025)])
      assert.equal(isReason(bad), false, bad);
  });

  it('says what is wrong with a report', () => {
    assert.equal(conditionReportProblem(report()), undefined);
    assert.match(conditionReportProblem(report({ type: 'Ready' as never }))!, /unknown condition type Ready/);
    assert.match(conditionReportProblem(report({ status: 'true' as never }))!, /True, False or Unknown/);
    assert.match(conditionReportProblem(report({ reason: 'bad reason' }))!, /CamelCase/);
    assert.match(conditionReportProblem(report({ message: 'm'.repeat(32769) }))!, /longer than 32768/);
    assert.match(conditionReportProblem(report({ observedGeneration: -1 }))!, /non-negative integer/);
    assert.match(conditionReportProblem(report({ observedGeneration: 1.5 }))!, /non-negative integer/);
  });
});

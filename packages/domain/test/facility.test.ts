import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  facilityEventKinds,
  facilityGradingTable,
  facilitySeverities,
  finalFacilityState,
  gradeFacilityEvent,
} from '../src/index.js';

describe('facility event grading', () => {
  const grade = (kind: (typeof facilityEventKinds)[number], severity: (typeof facilitySeverities)[number]) =>
    gradeFacilityEvent({ kind, severity, critical: false });

  it('records info, holds the devices on a warning, and asks an operator before a power-off', () => {
    for (const kind of facilityEventKinds) {
      assert.deepEqual(grade(kind, 'info'), {
        response: 'record',
        approval: null,
        steps: [],
        rule: `${kind} at info: record only`,
      });
      assert.deepEqual(grade(kind, 'critical').steps, ['quarantine', 'power_off'], `${kind} critical`);
      assert.equal(grade(kind, 'critical').approval, 'operator');
    }
    assert.deepEqual(grade('cooling', 'warning'), {
      response: 'quarantine',
      approval: null,
      steps: ['quarantine'],
      rule: "cooling at warning: hold the racks' devices",
    });
    assert.equal(grade('power_feed', 'warning').response, 'quarantine');
  });

  it('treats a leak or smoke warning as a power-off that an operator approves after the devices are held', () => {
    for (const kind of ['leak', 'smoke'] as const) {
      const g = grade(kind, 'warning');
      assert.equal(g.response, 'power_off');
      assert.equal(g.approval, 'operator');
      assert.deepEqual(g.steps, ['quarantine', 'power_off']);
    }
  });

  it('powers off an event marked critical without approval, whatever its grade, and holds the devices after', () => {
    for (const kind of facilityEventKinds)
      for (const severity of facilitySeverities) {
        const g = gradeFacilityEvent({ kind, severity, critical: true });
        assert.equal(g.response, 'power_off');
        assert.equal(g.approval, 'none');
        assert.deepEqual(g.steps, ['power_off', 'quarantine']);
        assert.match(g.rule, /marked critical: power-off without approval/);
      }
  });

  it('grades from the table: every kind and severity has a response', () => {
    for (const kind of facilityEventKinds)
      for (const severity of facilitySeverities)
        assert.equal(grade(kind, severity).response, facilityGradingTable[kind][severity]);
  });

  it('ends a power-off done or failed by its outcome, a hold quarantined, a record recorded', () => {
    assert.equal(finalFacilityState(grade('leak', 'warning'), true), 'done');
    assert.equal(finalFacilityState(grade('leak', 'warning'), false), 'failed');
    assert.equal(finalFacilityState(grade('cooling', 'warning'), false), 'quarantined');
    assert.equal(finalFacilityState(grade('other', 'info'), false), 'recorded');
  });
});

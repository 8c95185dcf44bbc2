import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isPowerActionSatisfied, powerActions, resetTypeFor, roleAllows, settledStateFor } from '../src/index.js';

describe('power domain', () => {
  it('maps operations to Redfish ResetType as RMS does (rms.md §4.1)', () => {
    assert.deepEqual(resetTypeFor, {
      on: 'On',
      off: 'GracefulShutdown',
      'force-on': 'ForceOn',
      'force-off': 'ForceOff',
      'power-cycle': 'PowerCycle',
      'graceful-shutdown': 'GracefulShutdown',
      'graceful-restart': 'GracefulRestart',
      'force-restart': 'ForceRestart',
    });
  });

  it('knows when an action is already satisfied, and never for cycles and restarts', () => {
    assert.equal(isPowerActionSatisfied('on', 'On'), true);
    assert.equal(isPowerActionSatisfied('on', 'PoweringOn'), false);
    assert.equal(isPowerActionSatisfied('off', 'Off'), true);
    assert.equal(isPowerActionSatisfied('force-off', 'On'), false);
    for (const a of ['power-cycle', 'graceful-restart', 'force-restart'] as const) {
      assert.equal(isPowerActionSatisfied(a, 'On'), false);
      assert.equal(settledStateFor[a], 'On');
    }
    for (const a of powerActions) assert.ok(['On', 'Off'].includes(settledStateFor[a]));
  });

  it('orders roles viewer < operator < admin', () => {
    assert.equal(roleAllows('admin', 'operator'), true);
    assert.equal(roleAllows('operator', 'operator'), true);
    assert.equal(roleAllows('viewer', 'operator'), false);
    assert.equal(roleAllows('operator', 'admin'), false);
  });
});

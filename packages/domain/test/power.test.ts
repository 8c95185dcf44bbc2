import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  domainsPoweredOffUnderfoot,
  isPowerActionSatisfied,
  powerActions,
  resetTypeFor,
  roleAllows,
  settledStateFor,
} from '../src/index.js';

describe('power domain', () => {
  it('maps operations to Redfish ResetType as RMS does (docs/reference/rms-behaviours.md#reset-types)', () => {
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

  it('finds the racks where a batch would cut the shelves under trays it also acts on', () => {
    const shelf = (id: string, rackId: string | null) => ({ id, rackId, nodeType: 'powershelf_gb200_liteon' });
    const tray = (id: string, rackId: string | null) => ({ id, rackId, nodeType: 'compute_gb200_nvidia' });
    const mixed = [
      shelf('s1', 'r1'),
      tray('t1', 'r1'),
      shelf('s2', 'r2'),
      tray('t2', 'r3'),
      { id: 'x', rackId: 'r2', nodeType: null },
    ];
    assert.deepEqual(domainsPoweredOffUnderfoot(mixed, 'power-cycle'), ['r1', 'r2']);
    for (const a of powerActions.filter((x) => x !== 'on' && x !== 'force-on'))
      assert.deepEqual(domainsPoweredOffUnderfoot(mixed, a), ['r1', 'r2'], a);
    // Switching shelves on never takes power away; shelves alone, or trays alone, are fine.
    assert.deepEqual(domainsPoweredOffUnderfoot(mixed, 'on'), []);
    assert.deepEqual(domainsPoweredOffUnderfoot(mixed, 'force-on'), []);
    assert.deepEqual(domainsPoweredOffUnderfoot([shelf('s1', 'r1'), shelf('s3', 'r1'), tray('t2', 'r2')], 'off'), []);
    // A device outside any rack is a domain of its own.
    assert.deepEqual(domainsPoweredOffUnderfoot([shelf('s1', null), tray('t1', null)], 'off'), []);
  });
});

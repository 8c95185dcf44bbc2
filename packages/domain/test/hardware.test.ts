import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  NodeType,
  familyTable,
  hardwareOf,
  hardwareTable,
  kindOfNodeType,
  kindTable,
  missingForNvos,
  nodeTypeFor,
  nodeTypes,
  rackTypes,
  roleOfNodeType,
  startable,
  switchCounts,
  domainsPoweredOffUnderfoot,
} from '@fleet/domain';

describe('hardware table', () => {
  it('names every node type as RMS does: <kind prefix>_<family>_<vendor>', () => {
    for (const t of nodeTypes) {
      const row = hardwareTable[t];
      assert.equal(t, `${kindTable[row.kind].prefix}_${row.family}_${row.vendor}`);
    }
  });

  it('derives NodeType, descriptors and rack families from the rows', () => {
    assert.deepEqual(NodeType.options, nodeTypes);
    assert.deepEqual(rackTypes, ['gb200_nvl72', 'gb300_nvl72', 'vr_nvl72']);
    for (const t of nodeTypes) {
      const hw = hardwareOf(t)!;
      assert.equal(nodeTypeFor({ role: hw.kind, vendor: hw.vendor, productFamily: hw.family }), t);
      assert.equal(hw.rackType, familyTable[hw.family].rackType);
      assert.equal(roleOfNodeType(t), hw.kind);
    }
    assert.equal(nodeTypeFor({ role: 'compute', vendor: 'wiwynn', productFamily: 'gb200' }), null);
  });

  it('fills each row from its kind: managers, profiles and reset semantics', () => {
    assert.deepEqual(hardwareOf('compute_gb200_nvidia')!.managers, ['bmc', 'hmc']);
    assert.equal(hardwareOf('switch_gb300_nvidia')!.managementProfile, 'redfish+nvue');
    assert.equal(hardwareOf('powershelf_gb200_liteon')!.reset, 'shelf-output');
    assert.equal(hardwareOf('powershelf_gb200_delta')!.firmwareProfile, 'redfish-nvfwupd', 'a row overrides its kind');
    assert.equal(hardwareOf('powershelf_gb200_liteon')!.firmwareProfile, 'redfish-update');
  });

  it('knows nothing of names it does not hold, and says so', () => {
    assert.equal(hardwareOf('compute_gb200_wiwynn'), undefined);
    assert.equal(hardwareOf('constructor'), undefined, 'no prototype keys');
    assert.equal(kindOfNodeType(null), null);
    assert.throws(() => roleOfNodeType('switch_gb999_acme'), /unknown node type "switch_gb999_acme"/);
  });

  it('a row added to the table (compute_gb300_lenovo) is scheduled, batch-checked and refused NVOS as compute', () => {
    const lenovo = { deviceId: 'l1', rackId: 'r1', powerDomain: 'r1/a', nodeType: 'compute_gb300_lenovo' };
    const sw = { deviceId: 's1', rackId: 'r1', powerDomain: 'r1/a', nodeType: 'switch_gb300_nvidia' };
    assert.equal(hardwareOf('compute_gb300_lenovo')!.status, 'development');
    // The switch share cap counts switch trays only: a running Lenovo tray does not hold back the rack's switch.
    assert.deepEqual(switchCounts([lenovo, sw]), new Map([['r1', 1]]));
    const caps = { maxConcurrentPerSite: 10, maxConcurrentPerRack: 10, maxConcurrentPerPowerDomain: 10 };
    assert.deepEqual(startable([sw], [lenovo], { ...caps, maxSwitchShareOfRack: 0.5 }, switchCounts([lenovo, sw])), [
      sw,
    ]);
    // Powering a shelf off under a Lenovo tray is refused like under any fed device.
    const shelf = { id: 'p1', rackId: 'r1', nodeType: 'powershelf_gb300_liteon' };
    assert.equal(
      domainsPoweredOffUnderfoot([shelf, { id: 'l1', rackId: 'r1', nodeType: lenovo.nodeType }], 'off').length,
      1,
    );
    assert.deepEqual(
      missingForNvos({
        nodeType: lenovo.nodeType,
        nvosUrl: null,
        nvosSsh: null,
        nvosCredentialRef: 'x',
        credentialRef: null,
      }),
      ['switch node type', 'NVOS NVUE URL', 'NVOS SSH endpoint'],
    );
  });
});

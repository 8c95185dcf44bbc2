import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bmcUrlFor } from '@fleet/domain';
import { rackTypeFromNames } from '../src/hardware-names.js';
import { deviceRow } from '../src/mapping.js';
import type { NbDevice, NbDeviceType } from '../src/netbox-types.js';

const types = new Map<number, NbDeviceType>([
  [
    1,
    {
      id: 1,
      model: 'GB200 NVL72 Compute Tray',
      slug: 'compute-gb200-nvidia',
      u_height: 1,
      manufacturer: { id: 1, slug: 'nvidia' },
      last_updated: '',
    },
  ],
  [
    2,
    {
      id: 2,
      model: 'GB300 NVL72 Power Shelf (LITE-ON)',
      slug: 'powershelf-gb300-liteon',
      u_height: 1,
      manufacturer: { id: 2, slug: 'lite-on' },
      last_updated: '',
    },
  ],
  [
    4,
    {
      id: 4,
      model: 'ThinkSystem GB300 NVL72 compute node',
      slug: 'thinksystem-sr-gb300',
      u_height: 1,
      manufacturer: { id: 4, slug: 'lenovo' },
      last_updated: '',
    },
  ],
  [
    5,
    {
      id: 5,
      model: 'GB200 to GB300 conversion tray',
      slug: 'conversion-tray',
      u_height: 1,
      manufacturer: { id: 1, slug: 'nvidia' },
      last_updated: '',
    },
  ],
  [
    3,
    {
      id: 3,
      model: 'Toaster 3000',
      slug: 'toaster',
      u_height: 2,
      manufacturer: { id: 3, slug: 'acme' },
      last_updated: '',
    },
  ],
]);

const device = (over: Partial<NbDevice>): NbDevice => ({
  id: 7,
  name: 'ct01',
  device_type: { id: 1 },
  role: { id: 1, slug: 'compute-tray' },
  platform: null,
  serial: 'SN1',
  site: { id: 1, slug: 'ams1' },
  rack: { id: 3 },
  position: 43,
  face: { value: 'front' },
  status: { value: 'active' },
  oob_ip: { id: 99 },
  custom_fields: { fleet_management_profile: 'redfish-http:8443', fleet_credential_ref: 'bmc/default' },
  last_updated: '2026-12-01T10:00:00.123456Z',
  ...over,
});

describe('NetBox → mirror mapping', () => {
  it('derives the RMS node type from role, vendor and product family', () => {
    assert.equal(deviceRow(device({}), types).nodeType, 'compute_gb200_nvidia');
    const shelf = deviceRow(device({ device_type: { id: 2 }, role: { id: 2, slug: 'power-shelf' } }), types);
    assert.equal(shelf.nodeType, 'powershelf_gb300_liteon');
    assert.equal(shelf.vendor, 'liteon', 'manufacturer slug aliases are normalised');
  });

  it('reads role, manufacturer and family through the hardware table (a Lenovo GB300 compute node)', () => {
    const lenovo = deviceRow(device({ device_type: { id: 4 }, role: { id: 3, slug: 'gpu-compute' } }), types);
    assert.equal(lenovo.nodeType, 'compute_gb300_lenovo');
    assert.equal(lenovo.vendor, 'lenovo');
  });

  it('a device type slug that names a node type wins over the role (like RMS NodeType over the descriptor)', () => {
    const row = deviceRow(device({ role: { id: 9, slug: 'spare' } }), types);
    assert.equal(row.nodeType, 'compute_gb200_nvidia');
  });

  it('does not guess: a model naming two families or a role naming no kind gives no node type', () => {
    assert.equal(deviceRow(device({ device_type: { id: 5 } }), types).nodeType, null);
    assert.equal(deviceRow(device({ device_type: { id: 4 }, role: { id: 9, slug: 'spare' } }), types).nodeType, null);
    assert.equal(rackTypeFromNames('GB200 and GB300 mixed'), null);
    assert.equal(rackTypeFromNames('Vera Rubin NVL72'), 'vr_nvl72');
  });

  it('keeps what it cannot classify, with a null node type (an inventory issue), instead of failing', () => {
    const odd = deviceRow(
      device({
        device_type: { id: 3 },
        role: { id: 9, slug: 'toaster' },
        name: null,
        status: { value: 'burn-in' },
        custom_fields: {},
      }),
      types,
    );
    assert.equal(odd.nodeType, null);
    assert.equal(odd.name, 'netbox-device-7');
    assert.equal(odd.lifecycleState, 'burn-in', 'unknown NetBox status values are kept');
    assert.equal(odd.credentialRef, null);
    assert.equal(odd.uHeight, 2);
    assert.deepEqual([odd.nvosUrl, odd.nvosSsh, odd.nvosCredentialRef, odd.nvosHostKey], [null, null, null, null]);
  });

  it('reads NVOS endpoints from the fleet_nvos_* custom fields, trimmed, blanks as absent', () => {
    const sw = deviceRow(
      device({
        custom_fields: {
          fleet_nvos_url: ' https://10.0.0.5 ',
          fleet_nvos_ssh: '10.0.0.5:22',
          fleet_nvos_credential_ref: '',
          fleet_nvos_host_key: null,
        },
      }),
      types,
    );
    assert.deepEqual(
      [sw.nvosUrl, sw.nvosSsh, sw.nvosCredentialRef, sw.nvosHostKey],
      ['https://10.0.0.5', '10.0.0.5:22', null, null],
    );
  });

  it('reads the Redfish system id from fleet_redfish_system_id, trimmed; absent or blank is null', () => {
    assert.equal(
      deviceRow(device({ custom_fields: { fleet_redfish_system_id: ' System_2 ' } }), types).redfishSystemId,
      'System_2',
    );
    assert.equal(deviceRow(device({ custom_fields: { fleet_redfish_system_id: '' } }), types).redfishSystemId, null);
    assert.equal(deviceRow(device({}), types).redfishSystemId, null);
  });

  it('keys a device and a rack to their site by NetBox id, not by slug (a slug can be renamed)', () => {
    assert.equal(deviceRow(device({ site: { id: 5, slug: 'renamed' } }), types).siteNetboxId, 5);
  });

  it('reads rack families from rack types', () => {
    assert.equal(rackTypeFromNames('gb300-nvl72'), 'gb300_nvl72');
    assert.equal(rackTypeFromNames('GB200 NVL72'), 'gb200_nvl72');
    assert.equal(rackTypeFromNames('vr-nvl72'), 'vr_nvl72');
    assert.equal(rackTypeFromNames(null), null);
  });

  it('builds BMC URLs from management profiles, and refuses unreadable ones', () => {
    assert.equal(bmcUrlFor(null, '10.0.0.5'), 'https://10.0.0.5');
    assert.equal(bmcUrlFor('redfish', '10.0.0.5'), 'https://10.0.0.5');
    assert.equal(bmcUrlFor('redfish-http:8443', '127.20.0.1'), 'http://127.20.0.1:8443');
    assert.equal(bmcUrlFor('redfish-https:9443', 'fd00::5'), 'https://[fd00::5]:9443');
    assert.equal(bmcUrlFor('ipmi', '10.0.0.5'), null);
  });
});

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { profiles } from '../src/redfish/profiles/index.js';
import { nvl72, nvlinksPerGpu } from '../src/redfish/rack.js';
import { rf, startSim, type TestSim } from './helpers.js';

const SYSTEM = '/redfish/v1/Systems/System_0';
const HGX = '/redfish/v1/Systems/HGX_Baseboard_0';
const members = async (base: string, path: string): Promise<string[]> => {
  const res = await rf(base, 'GET', path);
  assert.equal(res.status, 200, path);
  assert.equal(res.body['Members@odata.count'], res.body.Members.length, path);
  return res.body.Members.map((m: { '@odata.id': string }) => m['@odata.id']);
};
const bodies = async (base: string, path: string) =>
  Promise.all((await members(base, path)).map(async (p) => (await rf(base, 'GET', p)).body));

describe('compute tray inventory', () => {
  let t: TestSim;
  before(async () => {
    t = await startSim([
      { id: 'gb200', profile: 'gb200-compute', powerState: 'On' },
      { id: 'gb300', profile: 'gb300-compute', powerState: 'On' },
      { id: 'other200', profile: 'gb200-compute', serialNumber: 'CTGB2000000007' },
    ]);
  });
  after(() => t.close());

  for (const [id, gpuModel, hbmMiB] of [
    ['gb200', 'NVIDIA GB200', 189_471],
    ['gb300', 'NVIDIA GB300', 284_208],
  ] as const) {
    it(`${id}: System_0 summarises the Grace CPUs and their memory, with BIOS, boot and identity`, async () => {
      const sys = (await rf(t.url(id), 'GET', SYSTEM)).body;
      assert.deepEqual(sys.ProcessorSummary, {
        Count: nvl72.cpusPerComputeTray,
        CoreCount: 144,
        Model: 'Grace A02',
        Status: { State: 'Enabled', Health: 'OK', HealthRollup: 'OK' },
      });
      assert.equal(sys.MemorySummary.TotalSystemMemoryGiB, 960);
      assert.equal(sys.MemorySummary.Status.Health, 'OK');
      const uefi = profiles[`${id}-compute`].firmware.find((f) => f.id === 'UEFI')!;
      assert.equal(sys.BiosVersion, uefi.version);
      assert.equal(sys.SerialNumber, `SIM${id.toUpperCase()}`);
      assert.match(sys.SKU, /^P\d{4}-0001$/);
      assert.match(sys.PartNumber, /^699-/);
      assert.equal(sys.AssetTag, '');
      assert.equal(sys.Boot.BootSourceOverrideEnabled, 'Disabled');
      assert.deepEqual(sys.Boot['BootSourceOverrideEnabled@Redfish.AllowableValues'], [
        'Once',
        'Continuous',
        'Disabled',
      ]);
      assert.ok(sys.Boot['BootSourceOverrideTarget@Redfish.AllowableValues'].includes('Pxe'));
      assert.equal(sys.Memory['@odata.id'], `${SYSTEM}/Memory`);
    });

    it(`${id}: CPUs and GPUs with model, part and serial numbers; LPDDR5X and HBM with capacities`, async () => {
      const base = t.url(id);
      const cpus = await bodies(base, `${SYSTEM}/Processors`);
      assert.equal(cpus.length, 2);
      for (const cpu of cpus) {
        assert.equal(cpu.ProcessorType, 'CPU');
        assert.equal(cpu.TotalCores, 72);
        assert.match(cpu.SerialNumber, /^\d{13}$/);
      }
      const gpus = await bodies(base, `${HGX}/Processors`);
      assert.deepEqual(
        gpus.map((g) => g.Id),
        ['GPU_0', 'GPU_1', 'GPU_2', 'GPU_3'],
      );
      for (const gpu of gpus) {
        assert.equal(gpu.ProcessorType, 'GPU');
        assert.equal(gpu.Model, gpuModel);
        assert.match(gpu.PartNumber, /^[0-9A-F]{4}-886-A1$/);
        assert.match(gpu.SerialNumber, /^\d{13}$/);
        assert.deepEqual(gpu.Status, { State: 'Enabled', Health: 'OK', HealthRollup: 'OK', Conditions: [] });
        assert.equal(gpu.Ports['@odata.id'], `${HGX}/Processors/${gpu.Id}/Ports`);
        // The component chassis is the same part: same serial number.
        const chassis = (await rf(base, 'GET', gpu.Links.Chassis['@odata.id'])).body;
        assert.equal(chassis.SerialNumber, gpu.SerialNumber);
      }
      const serials = [...cpus, ...gpus].map((p) => p.SerialNumber);
      assert.equal(new Set(serials).size, serials.length, 'every part has its own serial');

      const hgx = (await rf(base, 'GET', HGX)).body;
      assert.equal(hgx.ProcessorSummary.Count, nvl72.gpusPerComputeTray);
      assert.equal(hgx.ProcessorSummary.Model, gpuModel);
      assert.equal(hgx.MemorySummary.TotalSystemMemoryGiB, Math.floor((4 * hbmMiB) / 1024));

      const lpddr = await bodies(base, `${SYSTEM}/Memory`);
      assert.deepEqual(
        lpddr.map((m) => [m.Id, m.MemoryDeviceType, m.CapacityMiB]),
        [
          ['ProcessorModule_0_Memory_0', 'LPDDR5_SDRAM', 491_520],
          ['ProcessorModule_1_Memory_0', 'LPDDR5_SDRAM', 491_520],
        ],
      );
      const hbm = await bodies(base, `${HGX}/Memory`);
      assert.equal(hbm.length, 4);
      for (const m of hbm) {
        assert.equal(m.MemoryDeviceType, 'HBM3');
        assert.equal(m.CapacityMiB, hbmMiB);
        assert.match(m.SerialNumber, /^\d{13}$/);
        assert.equal(m.Status.Health, 'OK');
      }
      const ports = await members(base, `${HGX}/Processors/GPU_0/Ports`);
      assert.equal(ports.length, nvlinksPerGpu);
    });
  }

  it('serial numbers are seeded by the device id: the same id gives the same serials, another id others', async () => {
    const again = await startSim([{ id: 'gb200', profile: 'gb200-compute' }]);
    try {
      const serial = async (base: string) => (await rf(base, 'GET', `${HGX}/Processors/GPU_1`)).body.SerialNumber;
      assert.equal(await serial(again.url('gb200')), await serial(t.url('gb200')));
      assert.notEqual(await serial(t.url('other200')), await serial(t.url('gb200')));
    } finally {
      await again.close();
    }
    // A configured tray serial is what System_0 reports.
    assert.equal((await rf(t.url('other200'), 'GET', SYSTEM)).body.SerialNumber, 'CTGB2000000007');
  });

  it('a PATCHed AssetTag reads back, guarded by If-Match', async () => {
    const base = t.url('gb200');
    const etag = (await rf(base, 'GET', SYSTEM)).headers.get('etag')!;
    const ok = await rf(base, 'PATCH', SYSTEM, { headers: { 'if-match': etag }, body: { AssetTag: 'FLEET-0042' } });
    assert.equal(ok.status, 200);
    assert.equal((await rf(base, 'GET', SYSTEM)).body.AssetTag, 'FLEET-0042');
    // The rest of the system is untouched by the PATCH.
    assert.equal((await rf(base, 'GET', SYSTEM)).body.ProcessorSummary.Count, 2);
    const stale = await rf(base, 'PATCH', SYSTEM, { headers: { 'if-match': etag }, body: { AssetTag: 'X' } });
    assert.equal(stale.status, 412);
    assert.equal((await rf(base, 'GET', SYSTEM)).body.AssetTag, 'FLEET-0042');
    assert.equal((await rf(base, 'PATCH', SYSTEM, { body: { AssetTag: 'x'.repeat(65) } })).status, 400);
  });

  it('a PATCHed boot override reads back and keeps its allowable values; a value outside them is refused', async () => {
    const base = t.url('gb300');
    const res = await rf(base, 'PATCH', SYSTEM, {
      body: { Boot: { BootSourceOverrideTarget: 'Pxe', BootSourceOverrideEnabled: 'Once' } },
    });
    assert.equal(res.status, 200);
    const boot = (await rf(base, 'GET', SYSTEM)).body.Boot;
    assert.equal(boot.BootSourceOverrideTarget, 'Pxe');
    assert.equal(boot.BootSourceOverrideEnabled, 'Once');
    assert.ok(boot['BootSourceOverrideTarget@Redfish.AllowableValues'].includes('Hdd'));
    await rf(base, 'PATCH', SYSTEM, { body: { Boot: { BootSourceOverrideEnabled: 'Disabled' } } });
    assert.equal((await rf(base, 'GET', SYSTEM)).body.Boot.BootSourceOverrideTarget, 'Pxe', 'unnamed keys stay');
    const bad = await rf(base, 'PATCH', SYSTEM, { body: { Boot: { BootSourceOverrideTarget: 'Floppy' } } });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error.code, /PropertyValueTypeError$/);
  });

  it('both managers serve NetworkProtocol and EthernetInterfaces', async () => {
    const base = t.url('gb200');
    const { address, port } = t.sim.bmc('gb200').spec;
    for (const [manager, nic] of [
      ['BMC_0', 'eth0'],
      ['HGX_BMC_0', 'usb0'],
    ] as const) {
      const m = (await rf(base, 'GET', `/redfish/v1/Managers/${manager}`)).body;
      const protocol = (await rf(base, 'GET', m.NetworkProtocol['@odata.id'])).body;
      assert.equal(protocol['@odata.type'], '#ManagerNetworkProtocol.v1_5_0.ManagerNetworkProtocol');
      assert.equal(protocol.SSH.ProtocolEnabled, true);
      const nics = await bodies(base, m.EthernetInterfaces['@odata.id']);
      assert.deepEqual(
        nics.map((n) => n.Id),
        [nic],
      );
      assert.match(nics[0].MACAddress, /^([0-9a-f]{2}:){5}[0-9a-f]{2}$/);
      if (manager === 'BMC_0') {
        assert.equal(protocol.HTTP.Port, port);
        assert.equal(nics[0].IPv4Addresses[0].Address, address, 'eth0 has the address the BMC answers on');
      }
    }
  });
});

describe('BMC NTP servers', () => {
  let t: TestSim;
  before(async () => {
    t = await startSim([{ id: 'ct' }]);
  });
  after(() => t.close());
  const PROTOCOL = '/redfish/v1/Managers/BMC_0/NetworkProtocol';
  const servers = async () => (await rf(t.url('ct'), 'GET', PROTOCOL)).body.NTP.NTPServers;
  const patch = (NTPServers: unknown[]) => rf(t.url('ct'), 'PATCH', PROTOCOL, { body: { NTP: { NTPServers } } });

  it('follow the Redfish array PATCH rules: a value replaces, {} keeps, null removes, the rest goes', async () => {
    assert.deepEqual(await servers(), []);
    assert.equal((await patch(['ntp-a', 'ntp-b', 'ntp-c'])).status, 200);
    assert.deepEqual(await servers(), ['ntp-a', 'ntp-b', 'ntp-c']);
    await patch([{}, null, 'ntp-d']);
    assert.deepEqual(await servers(), ['ntp-a', 'ntp-d']);
    await patch([{}]);
    assert.deepEqual(await servers(), ['ntp-a']);
    assert.equal((await rf(t.url('ct'), 'GET', PROTOCOL)).body.NTP.ProtocolEnabled, true, 'unnamed keys stay');
    assert.equal((await patch([42])).status, 400);
    const hmc = '/redfish/v1/Managers/HGX_BMC_0/NetworkProtocol';
    assert.equal((await rf(t.url('ct'), 'PATCH', hmc, { body: { NTP: { NTPServers: [] } } })).status, 405);
  });
});

describe('switch tray and power shelf identity', () => {
  let t: TestSim;
  before(async () => {
    t = await startSim([
      { id: 'nvsw', profile: 'nvswitch-tray', serialNumber: 'NVSWGB2000000020' },
      { id: 'shelf', profile: 'powershelf-liteon', serialNumber: 'PSGB2000000001' },
    ]);
  });
  after(() => t.close());

  it('the switch tray names its serial, part number and BIOS; its NVSwitch chips have their own serials', async () => {
    const base = t.url('nvsw');
    const sys = (await rf(base, 'GET', SYSTEM)).body;
    assert.equal(sys.SerialNumber, 'NVSWGB2000000020');
    assert.match(sys.PartNumber, /^920-/);
    assert.equal(sys.BiosVersion, '0ACTV.2.12');
    const enclosure = (await rf(base, 'GET', '/redfish/v1/Chassis/BMC_0')).body;
    assert.equal(enclosure.SerialNumber, 'NVSWGB2000000020');
    assert.equal(enclosure.PartNumber, sys.PartNumber);
    const chips = await Promise.all(
      [0, 1].map(async (c) => (await rf(base, 'GET', `/redfish/v1/Chassis/NVSwitch_${c}`)).body.SerialNumber),
    );
    assert.match(chips[0], /^\d{13}$/);
    assert.notEqual(chips[0], chips[1]);
    const patched = await rf(base, 'PATCH', SYSTEM, { body: { AssetTag: 'SW-7' } });
    assert.equal(patched.status, 200);
    assert.equal((await rf(base, 'GET', SYSTEM)).body.AssetTag, 'SW-7');
  });

  it('the power shelf chassis carries the shelf serial, part numbers and a writable AssetTag', async () => {
    const base = t.url('shelf');
    const path = '/redfish/v1/Chassis/powershelf';
    const shelf = (await rf(base, 'GET', path)).body;
    assert.equal(shelf.SerialNumber, 'PSGB2000000001');
    assert.equal(shelf.PartNumber, 'PF-1333-13RD-A01');
    assert.equal(shelf.AssetTag, '');
    const psu = (await rf(base, 'GET', `${path}/PowerSubsystem/PowerSupplies/PSU_0`)).body;
    assert.equal(psu.PartNumber, 'PS-5501-1L-A01');
    assert.equal((await rf(base, 'PATCH', path, { body: { AssetTag: 'PS-1' } })).status, 200);
    assert.equal((await rf(base, 'GET', path)).body.AssetTag, 'PS-1');
    const nics = await members(base, '/redfish/v1/Managers/BMC_0/EthernetInterfaces');
    assert.deepEqual(nics, ['/redfish/v1/Managers/BMC_0/EthernetInterfaces/eth0']);
  });
});

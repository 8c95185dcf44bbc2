import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import {
  applyPowerAction,
  getMnnvlinkTopology,
  getPowerState,
  RedfishClient,
  RedfishError,
  resetManager,
  resetSystem,
} from '../src/index.js';
import { fakeBmc, type FakeBmc } from './helpers/fake-bmc.js';
import { credentials } from './helpers/servers.js';

describe('operations against a dynamic fake BMC', () => {
  let bmc: FakeBmc;
  let client: RedfishClient;
  before(async () => {
    bmc = await fakeBmc(credentials);
    client = new RedfishClient({ baseUrl: bmc.url, credentials });
  });
  beforeEach(() => {
    bmc.state.resets.length = 0;
    bmc.requests.length = 0;
  });
  after(async () => {
    await client.close();
    await bmc.close();
  });

  it('power actions use the RMS ResetType mapping: "off" is GracefulShutdown', async () => {
    await applyPowerAction(client, 'on');
    assert.equal(await getPowerState(client), 'On');
    await applyPowerAction(client, 'off');
    assert.deepEqual(
      bmc.state.resets.map((r) => r.body),
      [{ ResetType: 'On' }, { ResetType: 'GracefulShutdown' }],
    );
    assert.equal(await getPowerState(client), 'Off');
  });

  it('a ResetType the system does not allow is refused locally', async () => {
    const err = await resetSystem(client, 'Nmi').catch((e: unknown) => e);
    assert.ok(err instanceof RedfishError && err.code === 'InvalidArgument', String(err));
    assert.equal(bmc.state.resets.length, 0);
  });

  it(`Manager.Reset on the BMC and the HMC, checked against the ActionInfo; links re-discovered \
afterwards`, async () => {
    await resetManager(client, 'bmc');
    await resetManager(client, 'hmc', 'ForceRestart');
    assert.deepEqual(bmc.state.resets, [
      { path: '/redfish/v1/Managers/BMC_0/Actions/Manager.Reset', body: { ResetType: 'GracefulRestart' } },
      { path: '/redfish/v1/Managers/HGX_BMC_0/Actions/Manager.Reset', body: { ResetType: 'ForceRestart' } },
    ]);
    const err = await resetManager(client, 'bmc', 'PowerCycle').catch((e: unknown) => e);
    assert.ok(err instanceof RedfishError && err.code === 'InvalidArgument', String(err));
    assert.equal(bmc.state.resets.length, 2);
    // After each reset the service root is read again.
    assert.ok(bmc.requests.filter((r) => r.path === '/redfish/v1').length >= 2);
  });

  it('reads the MNNVLink topology from the first processor that has it', async () => {
    const topo = await getMnnvlinkTopology(client);
    assert.equal(topo.chassisSerialNumber, 'RACK-SN-42');
    assert.equal(topo.slotNumber, 7);
    assert.equal(topo.trayIndex, 3);
    assert.equal(topo.processorUri, '/redfish/v1/Systems/System_0/Processors/GPU_0');
    assert.equal(topo.raw['SystemGUID'], 'abc');
  });

  it('PATCH sends If-Match with the current ETag; a stale ETag fails with FailedPrecondition', async () => {
    const uri = '/redfish/v1/Managers/BMC_0';
    const { etag } = await client.getWithEtag(uri);
    await client.patch(uri, { DateTimeLocalOffset: '+01:00' });
    const patch = bmc.requests.find((r) => r.method === 'PATCH');
    assert.equal(patch?.headers['if-match'], etag);
    assert.equal(bmc.state.managerTimeZone, '+01:00');
    const err = await client.patch(uri, { DateTimeLocalOffset: '+02:00' }, { etag: etag! }).catch((e: unknown) => e);
    assert.ok(err instanceof RedfishError && err.code === 'FailedPrecondition' && err.status === 412, String(err));
    assert.equal(bmc.state.managerTimeZone, '+01:00');
  });

  it('calls after close() are refused', async () => {
    const c = new RedfishClient({ baseUrl: bmc.url, credentials });
    await c.close();
    const err = await getPowerState(c).catch((e: unknown) => e);
    assert.ok(err instanceof RedfishError && err.code === 'FailedPrecondition');
  });
});

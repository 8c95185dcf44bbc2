import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { admin, rf, startSim, type TestSim } from './helpers.js';

const INVENTORY = '/redfish/v1/UpdateService/FirmwareInventory';

describe('$expand (DSP0266 §7.3.4)', () => {
  let t: TestSim;
  before(async () => {
    t = await startSim([
      { id: 'tray', profile: 'gb200-compute' },
      { id: 'plain', profile: 'gb200-compute', quirks: { noExpandQuery: true } },
    ]);
  });
  after(() => t.close());

  const get = (id: string, path: string, auth?: null) => rf(t.url(id), 'GET', path, auth === null ? { auth } : {});

  it('the service root advertises what the BMC does', async () => {
    assert.deepEqual((await get('tray', '/redfish/v1')).body.ProtocolFeaturesSupported.ExpandQuery, {
      ExpandAll: true,
      Levels: true,
      MaxLevels: 3,
      Links: true,
      NoLinks: true,
    });
    assert.equal((await get('plain', '/redfish/v1')).body.ProtocolFeaturesSupported.ExpandQuery.NoLinks, false);
  });

  it('`.` brings every member of a collection inline, each as a GET of it answers', async () => {
    const plain = (await get('tray', INVENTORY)).body;
    const expanded = await get('tray', `${INVENTORY}?$expand=.`);
    assert.equal(expanded.status, 200);
    assert.equal(expanded.body.Members.length, plain.Members.length);
    assert.ok(plain.Members.length > 10);
    for (const [i, member] of expanded.body.Members.entries()) {
      assert.equal(member['@odata.id'], plain.Members[i]['@odata.id']);
      assert.deepEqual(member, (await get('tray', member['@odata.id'])).body);
    }
    // A member's own hyperlinks stay links at one level.
    const related = expanded.body.Members.find((m: { RelatedItem?: unknown[] }) => m.RelatedItem?.length);
    assert.deepEqual(Object.keys(related.RelatedItem[0]), ['@odata.id']);
  });

  it('`.` leaves Links alone, `~` expands only Links, `*` both; $levels goes deeper', async () => {
    const root = (q: string) => get('tray', `/redfish/v1?$expand=${q}`).then((r) => r.body);
    const dot = await root('.');
    assert.equal(dot.UpdateService.Id, 'UpdateService');
    assert.deepEqual(Object.keys(dot.Links.ManagerProvidingService), ['@odata.id']);
    assert.deepEqual(Object.keys(dot.UpdateService.FirmwareInventory), ['@odata.id']);
    const tilde = await root('~');
    assert.deepEqual(Object.keys(tilde.UpdateService), ['@odata.id']);
    assert.equal(typeof tilde.Links.ManagerProvidingService.Id, 'string');
    const all = await root('*');
    assert.equal(all.UpdateService.Id, 'UpdateService');
    assert.equal(typeof all.Links.ManagerProvidingService.Id, 'string');
    const deep = await root('.($levels=2)');
    assert.equal(deep.UpdateService.FirmwareInventory.Members.length > 10, true);
    assert.deepEqual(Object.keys(deep.UpdateService.FirmwareInventory.Members[0]), ['@odata.id']);
  });

  it('a malformed or too deep $expand is a 400 naming the parameter', async () => {
    const bad = await get('tray', `${INVENTORY}?$expand=all`);
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error['@Message.ExtendedInfo'][0].MessageId, 'Base.1.22.QueryParameterValueFormatError');
    assert.deepEqual(bad.body.error['@Message.ExtendedInfo'][0].MessageArgs, ['all', '$expand']);
    const deep = await get('tray', `${INVENTORY}?$expand=*($levels=4)`);
    assert.equal(deep.status, 400);
    assert.equal(deep.body.error['@Message.ExtendedInfo'][0].MessageId, 'Base.1.22.QueryParameterOutOfRange');
  });

  it('the root is open to anyone, its expansion only with credentials', async () => {
    assert.equal((await get('tray', '/redfish/v1', null)).status, 200);
    assert.equal((await get('tray', '/redfish/v1?$expand=.', null)).status, 401);
  });

  it('a BMC without query support ignores $expand: members stay links', async () => {
    const r = await get('plain', `${INVENTORY}?$expand=.`);
    assert.equal(r.status, 200);
    for (const m of r.body.Members) assert.deepEqual(Object.keys(m), ['@odata.id']);
  });

  it('the admin API counts the requests its BMCs received, an expanded one as one', async () => {
    const before = (await admin(t, 'GET', '/stats')).body;
    assert.equal(before.bmcs, 2);
    await get('tray', `${INVENTORY}?$expand=.`);
    await get('plain', '/redfish/v1/nowhere');
    await admin(t, 'DELETE', '/bmcs/tray/requests');
    assert.equal((await admin(t, 'GET', '/stats')).body.requests, before.requests + 2);
  });
});

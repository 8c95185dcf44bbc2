import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rf, startSim, type TestSim } from './helpers.js';

const SHELF = '/redfish/v1/Chassis/powershelf';

describe('BMC quirks: reset types only in ActionInfo, several systems', () => {
  let t: TestSim;
  before(async () => {
    t = await startSim([
      { id: 'plain', profile: 'powershelf-liteon' },
      {
        id: 'bluefield-like',
        profile: 'powershelf-liteon',
        quirks: { resetTypesInActionInfoOnly: true, resetTypes: ['PowerCycle'] },
      },
      { id: 'blades', profile: 'gb200-compute', quirks: { extraSystems: ['System_1'] } },
    ]);
  });
  after(() => t.close());

  const action = async (id: string) =>
    ((await rf(t.url(id), 'GET', SHELF)).body as { Actions: Record<string, Record<string, unknown>> }).Actions[
      '#Chassis.Reset'
    ]!;

  it('by default the allowed reset types are inline and in the ActionInfo', async () => {
    assert.deepEqual(await action('plain'), {
      target: `${SHELF}/Actions/Chassis.Reset`,
      '@Redfish.ActionInfo': `${SHELF}/ResetActionInfo`,
      'ResetType@Redfish.AllowableValues': ['On', 'ForceOff', 'PowerCycle'],
    });
  });

  it('resetTypesInActionInfoOnly: only the ActionInfo names them, and the BMC enforces its own list', async () => {
    assert.deepEqual(await action('bluefield-like'), {
      target: `${SHELF}/Actions/Chassis.Reset`,
      '@Redfish.ActionInfo': `${SHELF}/ResetActionInfo`,
    });
    const info = (await rf(t.url('bluefield-like'), 'GET', `${SHELF}/ResetActionInfo`)).body as {
      Parameters: { AllowableValues: string[] }[];
    };
    assert.deepEqual(info.Parameters[0]!.AllowableValues, ['PowerCycle']);
    const refused = await rf(t.url('bluefield-like'), 'POST', `${SHELF}/Actions/Chassis.Reset`, {
      body: { ResetType: 'ForceOff' },
    });
    assert.equal(refused.status, 400);
  });

  it('extraSystems: listed after the profile’s systems and readable', async () => {
    const systems = (await rf(t.url('blades'), 'GET', '/redfish/v1/Systems')).body as {
      Members: { '@odata.id': string }[];
      'Members@odata.count': number;
    };
    assert.deepEqual(
      systems.Members.map((m) => m['@odata.id']),
      ['/redfish/v1/Systems/System_0', '/redfish/v1/Systems/HGX_Baseboard_0', '/redfish/v1/Systems/System_1'],
    );
    assert.equal(systems['Members@odata.count'], 3);
    const blade = await rf(t.url('blades'), 'GET', '/redfish/v1/Systems/System_1');
    assert.equal(blade.status, 200);
    assert.equal((blade.body as { Id: string }).Id, 'System_1');
    assert.equal((await rf(t.url('plain'), 'GET', '/redfish/v1/Systems/System_1')).status, 404);
  });
});

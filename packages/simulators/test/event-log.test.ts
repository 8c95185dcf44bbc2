import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventLog, LOG_CAPACITY } from '../src/redfish/event-log.js';
import { admin, eventually, rf, startSim, type Res, type TestSim } from './helpers.js';

const SYSTEM_LOG = '/redfish/v1/Systems/System_0/LogServices/EventLog';
const HGX_LOG = '/redfish/v1/Systems/HGX_Baseboard_0/LogServices/EventLog';
const BMC_LOG = '/redfish/v1/Managers/BMC_0/LogServices/EventLog';
const RESET = '/redfish/v1/Systems/System_0/Actions/ComputerSystem.Reset';

describe('BMC event logs (LogServices)', () => {
  let t: TestSim;
  before(async () => {
    t = await startSim(
      [
        { id: 'ct1', powerState: 'On' },
        { id: 'sw1', profile: 'nvswitch-tray' },
        { id: 'ps1', profile: 'powershelf-delta' },
      ],
      { timings: { bmcRebootS: 50 } },
    );
  });
  after(() => t.close());

  const entries = async (id: string, log: string) => {
    const res = await rf(t.url(id), 'GET', `${log}/Entries`);
    assert.equal(res.status, 200);
    assert.equal(res.body['Members@odata.count'], res.body.Members.length);
    return res.body.Members as Res['body'][];
  };

  it('serves an EventLog under each system and manager, linked from its owner', async () => {
    const owners: [string, string[]][] = [
      ['ct1', ['/redfish/v1/Systems/System_0', '/redfish/v1/Systems/HGX_Baseboard_0', '/redfish/v1/Managers/BMC_0']],
      ['sw1', ['/redfish/v1/Systems/System_0', '/redfish/v1/Managers/BMC_0']],
      ['ps1', ['/redfish/v1/Managers/BMC_0']],
    ];
    for (const [id, paths] of owners) {
      for (const owner of paths) {
        const body = (await rf(t.url(id), 'GET', owner)).body;
        assert.equal(body.LogServices['@odata.id'], `${owner}/LogServices`, `${id} ${owner}`);
        const services = (await rf(t.url(id), 'GET', `${owner}/LogServices`)).body;
        assert.equal(services['@odata.type'], '#LogServiceCollection.LogServiceCollection');
        assert.deepEqual(services.Members, [{ '@odata.id': `${owner}/LogServices/EventLog` }]);
        const log = (await rf(t.url(id), 'GET', `${owner}/LogServices/EventLog`)).body;
        assert.match(log['@odata.type'], /^#LogService\.v1_\d+_\d+\.LogService$/);
        assert.equal(log.Id, 'EventLog');
        assert.equal(log.OverWritePolicy, 'WrapsWhenFull');
        assert.equal(log.MaxNumberOfRecords, LOG_CAPACITY);
        assert.equal(log.Entries['@odata.id'], `${owner}/LogServices/EventLog/Entries`);
        assert.equal(
          log.Actions['#LogService.ClearLog'].target,
          `${owner}/LogServices/EventLog/Actions/LogService.ClearLog`,
        );
        const collection = (await rf(t.url(id), 'GET', log.Entries['@odata.id'])).body;
        assert.equal(collection['@odata.type'], '#LogEntryCollection.LogEntryCollection');
      }
    }
    const manager = (await rf(t.url('ct1'), 'GET', '/redfish/v1/Managers/HGX_BMC_0')).body;
    assert.equal(manager.LogServices, undefined, 'the HMC has no event log of its own');
  });

  it('a power change appends an Event entry with a standard MessageId, readable on its own', async () => {
    assert.equal((await rf(t.url('ct1'), 'POST', RESET, { body: { ResetType: 'ForceOff' } })).status, 204);
    const [entry] = (await entries('ct1', SYSTEM_LOG)).slice(-1);
    assert.equal(entry!.EntryType, 'Event');
    assert.equal(entry!.Severity, 'OK');
    assert.equal(entry!.MessageId, 'ResourceEvent.1.4.ResourcePoweredOff');
    assert.equal(entry!.Message, "The resource 'System_0' has powered off.");
    assert.deepEqual(entry!.MessageArgs, ['System_0']);
    assert.equal(entry!.Links.OriginOfCondition['@odata.id'], '/redfish/v1/Systems/System_0');
    assert.ok(!Number.isNaN(Date.parse(entry!.Created)));
    const alone = await rf(t.url('ct1'), 'GET', entry!['@odata.id']);
    assert.equal(alone.status, 200);
    assert.deepEqual(alone.body, entry);

    await rf(t.url('ct1'), 'POST', RESET, { body: { ResetType: 'On' } });
    const on = await eventually(async () => {
      const last = (await entries('ct1', SYSTEM_LOG)).at(-1)!;
      return last.MessageId.endsWith('ResourcePoweredOn') ? last : undefined;
    });
    assert.equal(Number(on.Id), Number(entry!.Id) + 1);
  });

  it('a power shelf logs its output changes in its manager log', async () => {
    const shelf = '/redfish/v1/Chassis/powershelf/Actions/Chassis.Reset';
    await rf(t.url('ps1'), 'POST', shelf, { body: { ResetType: 'ForceOff' } });
    await rf(t.url('ps1'), 'POST', shelf, { body: { ResetType: 'On' } });
    const ids = await eventually(async () => {
      const list = (await entries('ps1', BMC_LOG)).map((e) => e.MessageId.split('.').at(-1));
      return list.includes('ResourcePoweredOn') ? list : undefined;
    });
    assert.deepEqual(ids.slice(-2), ['ResourcePoweredOff', 'ResourcePoweredOn']);
  });

  it('part faults go to the log of the system that holds the part, and their clearing too', async () => {
    await admin(t, 'POST', '/bmcs/ct1/health/faults', { part: 'gpu', gpu: 3, reason: 'XID 48: DBE' });
    await admin(t, 'POST', '/bmcs/ct1/health/faults', {
      part: 'memory',
      memory: 'ProcessorModule_1_Memory_0',
      health: 'Warning',
      reason: 'correctable ECC storm',
    });
    const gpu = (await entries('ct1', HGX_LOG)).at(-1)!;
    assert.equal(gpu.MessageId, 'ResourceEvent.1.4.ResourceErrorsDetected');
    assert.equal(gpu.Severity, 'Critical');
    assert.equal(gpu.Message, "The resource property GPU_3 has detected errors of type 'XID 48: DBE'.");
    assert.equal(gpu.Links.OriginOfCondition['@odata.id'], '/redfish/v1/Systems/HGX_Baseboard_0/Processors/GPU_3');
    const lpddr = (await entries('ct1', SYSTEM_LOG)).at(-1)!;
    assert.equal(lpddr.Severity, 'Warning');
    assert.deepEqual(lpddr.MessageArgs, ['ProcessorModule_1_Memory_0', 'correctable ECC storm']);

    assert.equal((await admin(t, 'DELETE', '/bmcs/ct1/health/faults')).status, 204);
    const corrected = (await entries('ct1', HGX_LOG)).at(-1)!;
    assert.equal(corrected.MessageId, 'ResourceEvent.1.4.ResourceErrorsCorrected');
    assert.equal(corrected.Severity, 'OK');
    assert.equal((await entries('ct1', SYSTEM_LOG)).at(-1)!.MessageId, 'ResourceEvent.1.4.ResourceErrorsCorrected');
  });

  it('ClearLog empties one log; entry ids keep counting; the action takes POST only', async () => {
    const before = await entries('ct1', SYSTEM_LOG);
    assert.ok(before.length > 0);
    const target = `${SYSTEM_LOG}/Actions/LogService.ClearLog`;
    assert.equal((await rf(t.url('ct1'), 'GET', target)).status, 405);
    assert.equal((await rf(t.url('ct1'), 'POST', target, { body: {} })).status, 204);
    assert.deepEqual(await entries('ct1', SYSTEM_LOG), []);
    assert.ok((await entries('ct1', HGX_LOG)).length > 0, 'the other logs keep their entries');
    assert.equal((await rf(t.url('ct1'), 'GET', before[0]!['@odata.id'])).status, 404);

    await rf(t.url('ct1'), 'POST', RESET, { body: { ResetType: 'ForceOff' } });
    const [next] = await entries('ct1', SYSTEM_LOG);
    assert.ok(Number(next!.Id) > Number(before.at(-1)!.Id));
    await rf(t.url('ct1'), 'POST', RESET, { body: { ResetType: 'On' } });
  });

  it('a BMC reboot is logged in the manager log when the BMC is back', async () => {
    const reset = '/redfish/v1/Managers/BMC_0/Actions/Manager.Reset';
    assert.equal((await rf(t.url('sw1'), 'POST', reset, { body: { ResetType: 'ForceRestart' } })).status, 204);
    const entry = await eventually(async () => {
      const res = await rf(t.url('sw1'), 'GET', `${BMC_LOG}/Entries`);
      return res.status === 200 ? res.body.Members.at(-1) : undefined;
    });
    assert.equal(entry.MessageId, 'ResourceEvent.1.4.ResourcePoweredOn');
    assert.deepEqual(entry.MessageArgs, ['BMC_0']);
  });

  it('keeps at most LOG_CAPACITY entries, dropping the oldest', () => {
    const log = new EventLog();
    for (let i = 0; i < LOG_CAPACITY + 10; i++)
      log.append({ severity: 'OK', messageId: 'M', message: `m${i}`, messageArgs: [], origin: '/redfish/v1' });
    assert.equal(log.records.length, LOG_CAPACITY);
    assert.equal(log.records[0]!.id, 11);
    assert.equal(log.records.at(-1)!.message, `m${LOG_CAPACITY + 9}`);
    assert.equal(log.byId('5'), undefined);
  });
});

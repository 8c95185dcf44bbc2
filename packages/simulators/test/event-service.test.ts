import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { admin, eventually, rf, sleep, startReceiver, startSim, type Receiver, type TestSim } from './helpers.js';

const SUBS = '/redfish/v1/EventService/Subscriptions';
const RESET = '/redfish/v1/Systems/System_0/Actions/ComputerSystem.Reset';

describe('EventService subscriptions and push delivery', () => {
  let t: TestSim;
  let rx: Receiver;
  before(async () => {
    t = await startSim([
      { id: 'ct1', powerState: 'On' },
      { id: 'ct2', powerState: 'On' },
      { id: 'ps1', profile: 'powershelf-liteon' },
    ]);
    rx = await startReceiver();
  });
  after(async () => {
    await t.close();
    await rx.close();
  });

  const subscribe = async (id: string, body: Record<string, unknown>) => {
    const res = await rf(t.url(id), 'POST', SUBS, { body: { Protocol: 'Redfish', ...body } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res;
  };
  const eventsFor = (context: string) => rx.received.filter((r) => r.body.Context === context).map((r) => r.body);

  it('every profile serves the EventService from the service root', async () => {
    for (const id of ['ct1', 'ps1']) {
      const root = (await rf(t.url(id), 'GET', '/redfish/v1')).body;
      assert.equal(root.EventService['@odata.id'], '/redfish/v1/EventService');
      const svc = (await rf(t.url(id), 'GET', '/redfish/v1/EventService')).body;
      assert.match(svc['@odata.type'], /^#EventService\.v1_\d+_\d+\.EventService$/);
      assert.equal(svc.ServiceEnabled, true);
      assert.equal(svc.DeliveryRetryAttempts, 3);
      assert.equal(svc.Subscriptions['@odata.id'], SUBS);
      assert.deepEqual(svc.RegistryPrefixes, ['Base', 'ResourceEvent', 'TaskEvent', 'Update']);
      const subs = await rf(t.url(id), 'GET', SUBS);
      assert.equal(subs.body['@odata.type'], '#EventDestinationCollection.EventDestinationCollection');
      assert.equal(subs.headers.get('allow'), 'GET, HEAD, POST');
    }
  });

  it('POST creates a subscription (201 + Location), GET reads it, DELETE removes it', async () => {
    const res = await subscribe('ct2', {
      Destination: rx.url,
      Context: 'crud',
      EventTypes: ['Alert'],
      RegistryPrefixes: ['ResourceEvent'],
      HttpHeaders: [{ 'X-Token': 'secret' }],
    });
    const location = res.headers.get('location')!;
    assert.match(location, /^\/redfish\/v1\/EventService\/Subscriptions\/\d+$/);
    assert.equal(res.body['@odata.id'], location);
    const read = (await rf(t.url('ct2'), 'GET', location)).body;
    assert.equal(read['@odata.type'], '#EventDestination.v1_8_0.EventDestination');
    assert.equal(read.Destination, rx.url);
    assert.equal(read.Context, 'crud');
    assert.equal(read.SubscriptionType, 'RedfishEvent');
    assert.deepEqual(read.EventTypes, ['Alert']);
    assert.deepEqual(read.HttpHeaders, [], 'headers are write-only');
    assert.deepEqual((await rf(t.url('ct2'), 'GET', SUBS)).body.Members, [{ '@odata.id': location }]);
    assert.equal((await rf(t.url('ct2'), 'DELETE', location)).status, 204);
    assert.equal((await rf(t.url('ct2'), 'GET', location)).status, 404);
    assert.equal((await rf(t.url('ct2'), 'DELETE', location)).status, 404);
    assert.equal((await rf(t.url('ct2'), 'GET', SUBS)).body['Members@odata.count'], 0);
  });

  it('refuses a subscription it cannot serve, with a Base message', async () => {
    const ok = { Destination: rx.url, Protocol: 'Redfish' };
    const cases: [unknown, RegExp][] = [
      [{ Protocol: 'Redfish' }, /CreateFailedMissingReqProperties$/],
      [{ Destination: rx.url }, /CreateFailedMissingReqProperties$/],
      [{ ...ok, Destination: 'ftp://example.com/x' }, /PropertyValueFormatError$/],
      [{ ...ok, Destination: 'not a url' }, /PropertyValueFormatError$/],
      [{ ...ok, Protocol: 'SNMPv2c' }, /PropertyValueNotInList$/],
      [{ ...ok, EventTypes: ['MetricReport'] }, /PropertyValueNotInList$/],
      [{ ...ok, RegistryPrefixes: ['OpenBMC'] }, /PropertyValueNotInList$/],
      [{ ...ok, Frequency: 5 }, /PropertyUnknown$/],
      [{ ...ok, HttpHeaders: { 'X-A': 'b' } }, /PropertyValueTypeError$/],
    ];
    for (const [body, code] of cases) {
      const res = await rf(t.url('ct2'), 'POST', SUBS, { body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.match(res.body.error.code, code, JSON.stringify(body));
    }
    assert.equal((await rf(t.url('ct2'), 'GET', SUBS)).body['Members@odata.count'], 0);
  });

  it('pushes a fault as a Redfish Event whose LogEntry and origin resolve, and its clearing', async () => {
    await subscribe('ct1', { Destination: rx.url, Context: 'faults', HttpHeaders: [{ 'X-Token': 'abc' }] });
    await admin(t, 'POST', '/bmcs/ct1/health/faults', { part: 'gpu', gpu: 2, reason: 'XID 79' });
    const [event] = await eventually(async () => {
      const got = eventsFor('faults');
      return got.length > 0 ? got : undefined;
    });
    assert.equal(event['@odata.type'], '#Event.v1_7_0.Event');
    assert.equal(event.Events.length, 1);
    const record = event.Events[0];
    assert.equal(record.EventType, 'Alert');
    assert.equal(record.MessageId, 'ResourceEvent.1.4.ResourceErrorsDetected');
    assert.equal(record.MessageSeverity, 'Critical');
    assert.deepEqual(record.MessageArgs, ['GPU_2', 'XID 79']);
    assert.ok(!Number.isNaN(Date.parse(record.EventTimestamp)));
    const origin = await rf(t.url('ct1'), 'GET', record.OriginOfCondition['@odata.id']);
    assert.equal(origin.body.Status.Health, 'Critical');
    const entry = await rf(t.url('ct1'), 'GET', record.LogEntry['@odata.id']);
    assert.equal(entry.body.MessageId, record.MessageId);
    assert.equal(rx.received.find((r) => r.body.Context === 'faults')!.headers['x-token'], 'abc');

    await admin(t, 'DELETE', '/bmcs/ct1/health/faults');
    const cleared = await eventually(async () => eventsFor('faults')[1]);
    assert.equal(cleared.Events[0].EventType, 'StatusChange');
    assert.equal(cleared.Events[0].MessageId, 'ResourceEvent.1.4.ResourceErrorsCorrected');
  });

  it('filters by EventTypes and RegistryPrefixes; power changes are StatusChange events', async () => {
    await subscribe('ct1', { Destination: rx.url, Context: 'alerts', EventTypes: ['Alert'] });
    await subscribe('ct1', { Destination: rx.url, Context: 'updates', RegistryPrefixes: ['Update'] });
    await subscribe('ct1', { Destination: rx.url, Context: 'status', EventTypes: ['StatusChange'] });
    await rf(t.url('ct1'), 'POST', RESET, { body: { ResetType: 'ForceOff' } });
    const [off] = await eventually(async () => (eventsFor('status').length > 0 ? eventsFor('status') : undefined));
    assert.equal(off.Events[0].MessageId, 'ResourceEvent.1.4.ResourcePoweredOff');
    assert.equal(off.Events[0].OriginOfCondition['@odata.id'], '/redfish/v1/Systems/System_0');
    await sleep(100);
    assert.deepEqual(eventsFor('alerts'), []);
    assert.deepEqual(eventsFor('updates'), []);
    await rf(t.url('ct1'), 'POST', RESET, { body: { ResetType: 'On' } });
  });

  it('SubmitTestEvent sends the test message to subscribers', async () => {
    const target = '/redfish/v1/EventService/Actions/EventService.SubmitTestEvent';
    assert.equal((await rf(t.url('ct1'), 'POST', target, { body: { EventType: 'Bogus' } })).status, 400);
    assert.equal((await rf(t.url('ct1'), 'POST', target, { body: {} })).status, 204);
    const test = await eventually(async () =>
      eventsFor('alerts').find((e) => e.Events[0].MessageId === 'ResourceEvent.1.4.TestMessage'),
    );
    assert.equal(test.Events[0].EventType, 'Alert');
  });

  it('retries a failed delivery, a bounded number of times, without holding up the BMC', async () => {
    // Fails the first attempt of every event, then accepts: each event arrives twice.
    const flaky = await startReceiver((n) => (n % 2 === 0 ? 500 : 204));
    // Never answers: every attempt times out; the BMC must not wait for it.
    const silent = await startReceiver(() => null);
    // Always fails: 1 attempt + 3 retries, then the event is dropped.
    const broken = await startReceiver(() => 503);
    try {
      await subscribe('ps1', { Destination: flaky.url, Context: 'flaky' });
      await subscribe('ps1', { Destination: silent.url, Context: 'silent' });
      await subscribe('ps1', { Destination: broken.url, Context: 'broken' });
      await admin(t, 'POST', '/bmcs/ps1/health/faults', { part: 'psu', psu: 0 });
      const started = Date.now();
      assert.equal((await rf(t.url('ps1'), 'GET', '/redfish/v1/Chassis/powershelf')).status, 200);
      assert.ok(Date.now() - started < 1_000, 'the BMC answers while a subscriber hangs');

      await eventually(async () => (flaky.received.length === 2 ? true : undefined));
      assert.deepEqual(flaky.received[0]!.body, flaky.received[1]!.body, 'a retry sends the same event');
      await eventually(async () => (broken.received.length === 4 ? true : undefined));
      await sleep(300);
      assert.equal(broken.received.length, 4, 'no attempt after the last retry');
      const counts = (await admin(t, 'GET', '/bmcs/ps1')).body.events;
      assert.equal(counts.subscriptions, 3);
      assert.ok(counts.delivered >= 1 && counts.failed >= 1, JSON.stringify(counts));
    } finally {
      await Promise.all([flaky.close(), silent.close(), broken.close()]);
    }
  });

  it('a BMC that does not answer sends no events, and still logs', async () => {
    await subscribe('ct2', { Destination: rx.url, Context: 'quiet' });
    assert.equal((await admin(t, 'PUT', '/bmcs/ct2/health/unresponsive', { mode: 'reset' })).status, 200);
    await admin(t, 'POST', '/bmcs/ct2/health/faults', { part: 'leak', detector: 0 });
    await sleep(200);
    assert.deepEqual(eventsFor('quiet'), []);
    assert.equal((await admin(t, 'DELETE', '/bmcs/ct2/health/unresponsive')).status, 204);
    const log = await rf(t.url('ct2'), 'GET', '/redfish/v1/Systems/System_0/LogServices/EventLog/Entries');
    assert.equal(log.body.Members.at(-1).MessageId, 'ResourceEvent.1.4.ResourceStatusChangedCritical');
  });
});

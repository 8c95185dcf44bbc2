import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startRedfishSimulator, type RedfishSimulator } from '@fleet/simulators';
import {
  createEventSubscription,
  deleteEventSubscription,
  eventSubscriptionsUri,
  listEventSubscriptions,
  RedfishClient,
  RedfishError,
} from '../src/index.js';
import { freePort } from './helpers/servers.js';

const SUBS = '/redfish/v1/EventService/Subscriptions';

describe('EventService subscriptions against the BMC simulator', () => {
  let sim: RedfishSimulator;
  const client = (id: string) =>
    new RedfishClient({
      baseUrl: sim.bmcUrl(id),
      device: `dev-${id}`,
      credentials: { username: 'admin', password: 'pw' },
      retryBaseDelayMs: 5,
    });
  before(async () => {
    const port = await freePort();
    const bmc = (id: string, address: string, quirks = {}) => ({
      id,
      address,
      port,
      username: 'admin',
      password: 'pw',
      quirks,
    });
    sim = await startRedfishSimulator({
      bmcs: [bmc('with', '127.0.0.1'), bmc('without', '127.0.0.2', { noEventService: true })],
      timeScale: 0.001,
    });
  });
  after(() => sim.close());

  it('creates, lists and deletes a subscription; a BMC without EventService has no collection', async () => {
    const c = client('with');
    try {
      const collection = await eventSubscriptionsUri(c);
      assert.equal(collection, SUBS);
      const uri = await createEventSubscription(c, collection, {
        destination: 'http://127.0.0.1:9/events',
        context: 'ctx-1',
        eventTypes: ['StatusChange', 'Alert'],
        httpHeaders: { 'X-Token': 'tok' },
      });
      assert.match(uri, /^\/redfish\/v1\/EventService\/Subscriptions\/\d+$/);
      assert.deepEqual(await listEventSubscriptions(c, collection), [
        { uri, destination: 'http://127.0.0.1:9/events', context: 'ctx-1' },
      ]);
      await deleteEventSubscription(c, uri);
      assert.deepEqual(await listEventSubscriptions(c, collection), []);
    } finally {
      await c.close();
    }
    const none = client('without');
    try {
      assert.equal(await eventSubscriptionsUri(none), undefined);
    } finally {
      await none.close();
    }
  });

  it("a refusal is a typed error whose cause never quotes the header's secret", async () => {
    const c = client('with');
    try {
      // The simulator quotes the HttpHeaders it refuses (a header name with a space is no header name).
      const err = await createEventSubscription(c, SUBS, {
        destination: 'http://127.0.0.1:9/events',
        context: 'ctx-2',
        eventTypes: ['Alert'],
        httpHeaders: { 'Bad Name': 'very-secret-value' },
      }).then(
        () => assert.fail('accepted'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof RedfishError);
      assert.equal(err.code, 'InvalidArgument');
      assert.equal(err.uri, SUBS);
      assert.match(err.message, /subscription refused/);
      assert.match(err.message, /\(redacted\)/);
      assert.ok(!err.message.includes('very-secret-value'), err.message);
    } finally {
      await c.close();
    }
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  getPowerState,
  getUpdateService,
  listChassis,
  RedfishClient,
  RedfishError,
  resetSystem,
  taskUriFrom,
  waitForTask,
} from '../src/index.js';
import { credentials, json, serve, type TestServer } from './helpers/servers.js';

// Regressions of what the fuzzer (fuzz.test.ts) found: each malformed answer ends as a RedfishError naming the BMC
// and the URI, or reads as absent, never as a TypeError.

/** Answers `docs[path]` (a function for raw writes); 404 for anything else. */
function bmc(docs: Record<string, unknown>) {
  return serve((req, res, path) => {
    const doc = docs[path.replace(/\/+$/, '')];
    if (typeof doc === 'function') return (doc as (r: typeof res) => void)(res);
    if (doc === undefined) return json(res, req.method === 'GET' ? 404 : 204);
    json(res, 200, doc);
  });
}

const root = {
  Systems: { '@odata.id': '/redfish/v1/Systems' },
  Chassis: { '@odata.id': '/redfish/v1/Chassis' },
  UpdateService: { '@odata.id': '/redfish/v1/UpdateService' },
};
const systems = { Members: [{ '@odata.id': '/redfish/v1/Systems/1' }] };

async function failure(op: () => Promise<unknown>): Promise<RedfishError> {
  const err = await op().then(
    () => assert.fail('expected a RedfishError'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof RedfishError, String((err as Error)?.stack ?? err));
  return err;
}

describe('malformed Redfish answers', () => {
  const servers: TestServer[] = [];
  const clients: RedfishClient[] = [];
  const clientOf = async (docs: Record<string, unknown>, opts: { maxResponseBytes?: number } = {}) => {
    const server = await bmc(docs);
    servers.push(server);
    const client = new RedfishClient({ baseUrl: server.url, credentials, maxAttempts: 1, ...opts });
    clients.push(client);
    return { server, client };
  };
  let elsewhere: TestServer;
  before(async () => {
    elsewhere = await bmc({ '/redfish/v1/Systems': systems });
  });
  after(async () => {
    for (const c of clients) await c.close();
    for (const s of [...servers, elsewhere]) await s.close();
  });

  it('an empty 200 for the service root is Protocol naming /redfish/v1', async () => {
    const { server, client } = await clientOf({ '/redfish/v1': (res: Parameters<typeof json>[0]) => res.end() });
    const err = await failure(() => getPowerState(client));
    assert.equal(err.code, 'Protocol');
    assert.equal(err.uri, '/redfish/v1');
    assert.match(err.message, new RegExp(`${server.url} /redfish/v1: answered HTTP 200 with an empty body`));
  });

  it('a truncated or non-object document is Protocol naming its URI', async () => {
    const { client } = await clientOf({
      '/redfish/v1': root,
      '/redfish/v1/Systems': (res: Parameters<typeof json>[0]) => res.end('{"Members": [{"@odata.id": "/re'),
      '/redfish/v1/Chassis': [1, 2],
    });
    assert.equal((await failure(() => getPowerState(client))).uri, '/redfish/v1/Systems');
    assert.match((await failure(() => listChassis(client))).causeText, /JSON array, not a resource/);
  });

  it('Members that is not a list is Protocol naming the collection', async () => {
    const { client } = await clientOf({ '/redfish/v1': root, '/redfish/v1/Systems': { Members: { a: 1 } } });
    const err = await failure(() => getPowerState(client));
    assert.equal(err.code, 'Protocol');
    assert.equal(err.uri, '/redfish/v1/Systems');
    assert.match(err.causeText, /Members is object, not a list/);
  });

  it('a link to another host is refused before any request leaves, so credentials stay on the BMC', async () => {
    const { client } = await clientOf({
      '/redfish/v1': { Systems: { '@odata.id': `${elsewhere.url}/redfish/v1/Systems` } },
    });
    const err = await failure(() => getPowerState(client));
    assert.equal(err.code, 'Protocol');
    assert.match(err.causeText, /link leads off this BMC/);
    assert.equal(elsewhere.requests.length, 0);
  });

  it('a link that is not a URI is Protocol, not a TypeError from new URL', async () => {
    const { client } = await clientOf({ '/redfish/v1': { Systems: { '@odata.id': 'http://[::1' } } });
    const err = await failure(() => getPowerState(client));
    assert.equal(err.code, 'Protocol');
    assert.match(err.message, /"http:\/\/\[::1": link is not a URI/);
  });

  it('an answer longer than maxResponseBytes is refused, not buffered', async () => {
    const { client } = await clientOf({ '/redfish/v1': { Name: 'x'.repeat(4096) } }, { maxResponseBytes: 1024 });
    const err = await failure(() => client.root());
    assert.equal(err.code, 'Protocol');
    assert.match(err.causeText, /longer than 1024 bytes/);
  });

  it('ActionInfo AllowableValues that is not a list refuses the reset before any POST', async () => {
    const { server, client } = await clientOf({
      '/redfish/v1': root,
      '/redfish/v1/Systems': systems,
      '/redfish/v1/Systems/1': {
        Actions: {
          '#ComputerSystem.Reset': {
            target: '/redfish/v1/Systems/1/Actions/ComputerSystem.Reset',
            '@Redfish.ActionInfo': '/redfish/v1/Systems/1/ResetActionInfo',
          },
        },
      },
      '/redfish/v1/Systems/1/ResetActionInfo': { Parameters: [{ Name: 'ResetType', AllowableValues: true }] },
    });
    const err = await failure(() => resetSystem(client, 'ForceRestart'));
    assert.equal(err.uri, '/redfish/v1/Systems/1/ResetActionInfo');
    assert.match(err.causeText, /AllowableValues of ResetType is not a list/);
    assert.equal(server.requests.filter((r) => r.method === 'POST').length, 0);
  });

  it('a reset target that is not a string is FailedPrecondition, nothing posted', async () => {
    const { server, client } = await clientOf({
      '/redfish/v1': root,
      '/redfish/v1/Systems': systems,
      '/redfish/v1/Systems/1': { Actions: { '#ComputerSystem.Reset': { target: { x: 1 } } } },
    });
    assert.equal((await failure(() => resetSystem(client, 'On'))).code, 'FailedPrecondition');
    assert.equal(server.requests.filter((r) => r.method === 'POST').length, 0);
  });

  it('a task whose TaskState is a number and Messages not a list still classifies', async () => {
    const { client } = await clientOf({
      '/redfish/v1/TaskService/Tasks/1': { TaskState: 7, TaskStatus: 'OK', Messages: 'oops', PercentComplete: '5' },
      '/redfish/v1/TaskService/Tasks/2': { TaskState: 'Completed', Messages: [null, 5, { MessageId: 3 }] },
    });
    const one = await waitForTask(client, '/redfish/v1/TaskService/Tasks/1', { pollIntervalMs: 1, timeoutMs: 100 });
    assert.deepEqual(
      [one.outcome, one.taskState, one.percentComplete, one.messages],
      ['succeeded', undefined, undefined, []],
    );
    const two = await waitForTask(client, '/redfish/v1/TaskService/Tasks/2', { pollIntervalMs: 1, timeoutMs: 100 });
    assert.equal(two.outcome, 'succeeded');
    assert.equal(taskUriFrom({ headers: { location: 'http://[::1' }, body: { Messages: { a: 1 } } }), undefined);
  });

  it('a PowerState outside the schema reads Unknown, not the raw value', async () => {
    const { client } = await clientOf({
      '/redfish/v1': root,
      '/redfish/v1/Systems': systems,
      '/redfish/v1/Systems/1': { PowerState: { on: true } },
    });
    assert.equal(await getPowerState(client), 'Unknown');
  });

  it('UpdateService fields of the wrong type read as absent', async () => {
    const { client } = await clientOf({
      '/redfish/v1': root,
      '/redfish/v1/UpdateService': { MultipartHttpPushUri: 5, MaxImageSizeBytes: '9', ServiceEnabled: 'yes' },
    });
    assert.deepEqual(await getUpdateService(client), { uri: '/redfish/v1/UpdateService' });
  });

  it('an error body with a non-string message falls back to the HTTP status', async () => {
    const { client } = await clientOf({
      '/redfish/v1': (res: Parameters<typeof json>[0]) =>
        json(res, 500, { error: { message: { x: 1 }, '@Message.ExtendedInfo': 'not a list' } }),
    });
    assert.equal((await failure(() => client.root())).causeText, 'HTTP 500');
  });

  it('a login whose Location is not a URI still logs in', async () => {
    const server = await serve((req, res, path) => {
      if (path === '/redfish/v1') return json(res, 200, { Links: { Sessions: { '@odata.id': '/redfish/v1/S' } } });
      if (req.method === 'POST') return json(res, 201, {}, { 'x-auth-token': 't1', location: 'http://[::1' });
      json(res, 200, { Id: 'x' });
    });
    servers.push(server);
    const client = new RedfishClient({ baseUrl: server.url, credentials, auth: 'session', maxAttempts: 1 });
    clients.push(client);
    assert.deepEqual(await client.get('/redfish/v1/Anything'), { Id: 'x' });
    assert.equal(server.requests.at(-1)?.headers['x-auth-token'], 't1');
  });
});

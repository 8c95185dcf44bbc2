import type { IncomingMessage } from 'node:http';
import { authenticate } from './auth.js';
import type { SimulatedBmc } from './bmc.js';
import { methodNotAllowed, notFound } from './errors.js';
import { expandQueryOf, expandResource, type ExpandQuery } from './expand.js';
import { drain, isObject, readJson, type Reply } from './http-util.js';
import { SUBMIT_TEST_EVENT, SUBSCRIPTIONS } from './event-service.js';
import { managerReset, powerReset } from './handlers/actions.js';
import { clearLog, clearLogOf, createSubscription, deleteSubscription, submitTestEvent } from './handlers/events.js';
import { getResource, patchResource, readResource } from './handlers/resources.js';
import { createSession, deleteSession, SESSIONS } from './handlers/sessions.js';
import { multipartPush, type UploadSummary } from './handlers/update.js';
import { MULTIPART_PUSH_URI } from './profiles/common.js';
import { metadataDocument } from './metadata.js';
import { odataServiceDocument } from './odata.js';

export interface Exchange {
  bmc: SimulatedBmc;
  req: IncomingMessage;
  path: string;
  method: string;
  /** What the client sent, for the request log. */
  logged?: unknown;
}

/** Dispatches one Redfish request. Handlers throw RedfishErrorReply for errors. */
export async function route(x: Exchange): Promise<Reply> {
  const { bmc, req, path, method } = x;
  const read = async () => {
    const body = await readJson(req);
    // The request log is readable through the admin API: a password sent to the AccountService is not kept in it.
    x.logged = isObject(body) && 'Password' in body ? { ...body, Password: '(redacted)' } : body;
    return body;
  };

  if (path === '/redfish' && isGet(method)) return { status: 200, body: { v1: '/redfish/v1/' } };
  if (path === '/redfish/v1/odata' && isGet(method)) return { status: 200, body: odataServiceDocument(bmc) };
  if (path === '/redfish/v1' && isGet(method)) {
    bmc.rediscovered();
    const query = expandQuery(bmc, req);
    // The root is readable without credentials; what an expansion of it would show is not.
    if (query) authenticate(bmc, req);
    return withAllow(getResource(req, expanded(bmc, readResource(bmc, path)!, query)), 'GET, HEAD');
  }
  if (path === '/redfish/v1/$metadata' && isGet(method))
    return { status: 200, body: metadataDocument(bmc), headers: { 'Content-Type': 'application/xml;charset=utf-8' } };
  // DSP0266 §7.9: a POST to a collection's Members property creates a member, like a POST to the collection.
  if ((path === SESSIONS || path === `${SESSIONS}/Members`) && method === 'POST')
    return createSession(bmc, await read());

  // Everything else needs credentials; the request body is read only after they check out.
  authenticate(bmc, req);
  if (bmc.isStale(path)) return drainThen(req, notFound(path));

  if (method === 'POST') {
    if (path === bmc.profile.power.action) return powerReset(bmc, await read());
    if (bmc.profile.managers.some((m) => path === `${m}/Actions/Manager.Reset`)) return managerReset(bmc, await read());
    if (path === MULTIPART_PUSH_URI) {
      const summary: UploadSummary = {};
      x.logged = summary;
      return multipartPush(bmc, req, summary);
    }
    const log = clearLogOf(bmc, path);
    if (log) return drainThen(req, clearLog(bmc, log));
    if (path === SUBSCRIPTIONS || path === `${SUBSCRIPTIONS}/Members`) return createSubscription(bmc, await read());
    if (path === SUBMIT_TEST_EVENT) return submitTestEvent(bmc, await read());
  }
  if (method === 'DELETE' && path.startsWith(`${SESSIONS}/`)) {
    await drain(req);
    return deleteSession(bmc, path);
  }
  if (method === 'DELETE' && path.startsWith(`${SUBSCRIPTIONS}/`)) {
    await drain(req);
    return deleteSubscription(bmc, path);
  }

  const current = readResource(bmc, path);
  if (!current) {
    await drain(req);
    if (isActionTarget(bmc, path)) throw methodNotAllowed('POST');
    throw notFound(path);
  }
  if (isGet(method))
    return withAllow(getResource(req, expanded(bmc, current, expandQuery(bmc, req))), allowed(bmc, path));
  if (method === 'PATCH' && bmc.profile.writable.has(path)) return patchResource(bmc, req, path, current, await read());
  await drain(req);
  throw methodNotAllowed(allowed(bmc, path));
}

const isGet = (m: string) => m === 'GET' || m === 'HEAD';

/** The request's $expand, unless this BMC (quirk noExpandQuery) ignores the parameter. */
const expandQuery = (bmc: SimulatedBmc, req: IncomingMessage) =>
  bmc.spec.quirks?.noExpandQuery ? undefined : expandQueryOf(req.url ?? '');

function expanded(bmc: SimulatedBmc, body: Record<string, unknown>, query: ExpandQuery | undefined) {
  if (!query) return body;
  return expandResource(body, query, (uri) => (bmc.isStale(uri) ? undefined : readResource(bmc, uri)));
}

function isActionTarget(bmc: SimulatedBmc, path: string): boolean {
  return (
    path === bmc.profile.power.action ||
    path === MULTIPART_PUSH_URI ||
    path === SUBMIT_TEST_EVENT ||
    clearLogOf(bmc, path) !== undefined ||
    bmc.profile.managers.some((m) => path === `${m}/Actions/Manager.Reset`)
  );
}

const withAllow = (reply: Reply, allow: string): Reply => ({ ...reply, headers: { ...reply.headers, Allow: allow } });

export function allowed(bmc: SimulatedBmc, path: string): string {
  const methods = ['GET', 'HEAD'];
  if (bmc.profile.writable.has(path)) methods.push('PATCH');
  if (path === SESSIONS || path === SUBSCRIPTIONS) methods.push('POST');
  if (path.startsWith(`${SESSIONS}/`) || path.startsWith(`${SUBSCRIPTIONS}/`)) methods.push('DELETE');
  return methods.join(', ');
}

async function drainThen(req: IncomingMessage, reply: Reply): Promise<Reply> {
  await drain(req);
  return reply;
}

import type { IncomingMessage } from 'node:http';
import type { SimulatedBmc } from '../bmc.js';
import { redfishError, type RedfishErrorReply } from '../errors.js';
import { etagOf, isObject, matchesEtag, type Reply } from '../http-util.js';
import { message, type RedfishMessage } from '../messages.js';
import { ACCOUNT, passwordLength } from '../profiles/accounts.js';
import { extraSystem } from '../quirks.js';
import { taskBody } from '../tasks.js';
import { eventResource } from './events.js';
import { getSession, SESSIONS } from './sessions.js';

const TASKS = '/redfish/v1/TaskService/Tasks';

/** The current body of a resource, with PATCHed properties applied; undefined if there is none. */
export function readResource(bmc: SimulatedBmc, path: string): Record<string, unknown> | undefined {
  const build = bmc.profile.resources.get(path);
  if (build) return { ...build(bmc), ...bmc.patches(path) };
  const extra = extraSystem(bmc, path);
  if (extra) return extra;
  if (path.startsWith(`${TASKS}/`)) {
    const task = bmc.tasks().byId.get(path.slice(TASKS.length + 1));
    return task ? taskBody(task) : undefined;
  }
  if (path.startsWith(`${SESSIONS}/`)) return getSession(bmc, path)?.body as Record<string, unknown> | undefined;
  return eventResource(bmc, path);
}

export function getResource(req: IncomingMessage, body: Record<string, unknown>): Reply {
  const etag = etagOf(body);
  const inm = req.headers['if-none-match'];
  if (typeof inm === 'string' && matchesEtag(inm, etag)) return { status: 304, headers: { ETag: etag } };
  return { status: 200, body, headers: { ETag: etag } };
}

type Check = (v: unknown, current: Record<string, unknown>) => boolean;

/** An object property: every key it sets must be one the resource lists allowable values for, with such a value. */
const withinAllowable =
  (property: string): Check =>
  (v, current) => {
    const now = current[property];
    if (!isObject(v) || !isObject(now) || Object.keys(v).length === 0) return false;
    return Object.entries(v).every(([k, value]) => {
      const allowed = now[`${k}@Redfish.AllowableValues`];
      return Array.isArray(allowed) && allowed.includes(value);
    });
  };

/** An element of a PATCHed string array (DSP0266 §7.4.9): a value, null (remove it) or {} (leave it). */
const arrayElement = (e: unknown) =>
  e === null || typeof e === 'string' || (isObject(e) && Object.keys(e).length === 0);

const checks: Record<string, Check> = {
  AssetTag: (v) => typeof v === 'string' && v.length <= 64,
  Boot: withinAllowable('Boot'),
  NTP: (v) =>
    isObject(v) &&
    Object.keys(v).length > 0 &&
    Object.entries(v).every(([k, x]) =>
      k === 'NTPServers'
        ? Array.isArray(x) && x.every(arrayElement)
        : k === 'ProtocolEnabled' && typeof x === 'boolean',
    ),
  LocationIndicatorActive: (v) => typeof v === 'boolean',
  SessionTimeout: (v) => Number.isInteger(v) && (v as number) >= 30 && (v as number) <= 86_400,
  DateTimeLocalOffset: (v) => typeof v === 'string' && /^[+-]\d{2}:\d{2}$/.test(v),
  Password: (v) => typeof v === 'string' && v.length >= passwordLength.min && v.length <= passwordLength.max,
};

/** PATCH with optional If-Match (412 when it names another version of the resource). */
export function patchResource(
  bmc: SimulatedBmc,
  req: IncomingMessage,
  path: string,
  current: Record<string, unknown>,
  patch: unknown,
): Reply {
  const ifMatch = req.headers['if-match'];
  if (typeof ifMatch === 'string' && !matchesEtag(ifMatch, etagOf(current)))
    throw redfishError(412, 'PreconditionFailed');
  if (patch === undefined) throw redfishError(400, 'EmptyJSON');
  if (!isObject(patch)) throw redfishError(400, 'MalformedJSON');
  const writable = bmc.profile.writable.get(path) ?? [];
  const problems: RedfishMessage[] = [];
  const accepted: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith('@')) continue; // annotations such as @odata.etag are not properties
    if (!writable.includes(key))
      problems.push(message('Base', key in current ? 'PropertyNotWritable' : 'PropertyUnknown', [key]));
    else if (!checks[key]?.(value, current))
      problems.push(message('Base', 'PropertyValueTypeError', [JSON.stringify(value), key]));
    // An object property (Boot, NTP) keeps what the client did not name.
    else accepted[key] = isObject(value) && isObject(current[key]) ? mergeObject(current[key], value) : value;
  }
  if (problems.length > 0) throw errorOf(problems);
  if (Object.keys(accepted).length === 0) throw redfishError(400, 'EmptyJSON');
  if (path === '/redfish/v1/SessionService' && typeof accepted['SessionTimeout'] === 'number')
    bmc.sessions().timeoutS = accepted['SessionTimeout'];
  else if (path === ACCOUNT && typeof accepted['Password'] === 'string') {
    // Never kept as a patch: the password is write-only, and the account's body must not show it.
    const token = req.headers['x-auth-token'];
    bmc.changePassword(
      String(current['UserName']),
      accepted['Password'],
      typeof token === 'string' ? token : undefined,
    );
  } else bmc.applyPatch(path, accepted);
  const body = readResource(bmc, path)!;
  return { status: 200, body, headers: { ETag: etagOf(body) } };
}

/** Merges a PATCHed object into the current one; arrays inside follow DSP0266's array PATCH rules. */
function mergeObject(current: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const out = { ...current };
  for (const [k, v] of Object.entries(patch)) {
    const now = current[k];
    out[k] = Array.isArray(v) && Array.isArray(now) ? patchArray(now, v) : v;
  }
  return out;
}

/** null removes an element, {} leaves it as it is, a value replaces it; elements past the PATCH's end are removed. */
function patchArray(current: unknown[], patch: unknown[]): unknown[] {
  return patch.flatMap((e, i) => {
    if (e === null) return [];
    if (isObject(e) && Object.keys(e).length === 0) return i < current.length ? [current[i]] : [];
    return [e];
  });
}

function errorOf(problems: RedfishMessage[]): RedfishErrorReply {
  const first = problems[0]!;
  return {
    status: 400,
    body: { error: { code: first.MessageId, message: first.Message, '@Message.ExtendedInfo': problems } },
  };
}

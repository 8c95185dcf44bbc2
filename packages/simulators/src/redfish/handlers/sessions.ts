import type { SimulatedBmc } from '../bmc.js';
import { credentialsMatch } from '../auth.js';
import { notFound, redfishError } from '../errors.js';
import { isObject, type Reply } from '../http-util.js';
import type { Session } from '../sessions.js';

export const SESSIONS = '/redfish/v1/SessionService/Sessions';

export function sessionBody(s: Session): Record<string, unknown> {
  return {
    '@odata.id': `${SESSIONS}/${s.id}`,
    '@odata.type': '#Session.v1_3_0.Session',
    Id: s.id,
    Name: 'User Session',
    Description: 'Manager User Session',
    UserName: s.userName,
  };
}

/** POST /SessionService/Sessions: log in. Needs no prior authentication. */
export function createSession(bmc: SimulatedBmc, body: unknown): Reply {
  if (!isObject(body)) throw redfishError(400, 'PropertyMissing', ['UserName']);
  for (const key of ['UserName', 'Password'] as const) {
    if (body[key] === undefined) throw redfishError(400, 'PropertyMissing', [key]);
    if (typeof body[key] !== 'string')
      throw redfishError(400, 'PropertyValueTypeError', [JSON.stringify(body[key]), key]);
  }
  if (!credentialsMatch(bmc, body['UserName'] as string, body['Password'] as string)) {
    throw redfishError(401, 'NoValidSession', [], { 'WWW-Authenticate': 'Basic realm="Redfish"' });
  }
  const store = bmc.sessions();
  if (bmc.faults.sessionExhaustion || store.size >= store.limit) throw redfishError(503, 'SessionLimitExceeded');
  const session = store.create(body['UserName'] as string);
  return {
    status: 201,
    body: sessionBody(session),
    headers: { Location: `${SESSIONS}/${session.id}`, 'X-Auth-Token': session.token },
  };
}

export function getSession(bmc: SimulatedBmc, path: string): Reply | undefined {
  const s = bmc.sessions().byId.get(path.slice(SESSIONS.length + 1));
  return s ? { status: 200, body: sessionBody(s) } : undefined;
}

export function deleteSession(bmc: SimulatedBmc, path: string): Reply {
  const id = path.slice(SESSIONS.length + 1);
  if (!bmc.sessions().byId.delete(id)) throw notFound(path);
  return { status: 204 };
}

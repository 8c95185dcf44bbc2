import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { SimulatedBmc } from './bmc.js';
import { redfishError } from './errors.js';
import type { Session } from './sessions.js';

const equal = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

export function credentialsMatch(bmc: SimulatedBmc, user: string, password: string): boolean {
  // Evaluate both so a wrong user name costs the same as a wrong password.
  const u = equal(user, bmc.spec.username);
  const p = equal(password, bmc.password);
  return u && p;
}

/** X-Auth-Token (a session) or HTTP Basic, as DSP0266 §13.3 requires a service to accept. */
export function authenticate(bmc: SimulatedBmc, req: IncomingMessage): Session | 'basic' {
  const token = req.headers['x-auth-token'];
  if (typeof token === 'string' && token.length > 0) {
    const session = bmc.sessions().touch(token);
    if (session) return session;
  } else {
    const header = req.headers.authorization ?? '';
    if (header.startsWith('Basic ')) {
      const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon > 0 && credentialsMatch(bmc, decoded.slice(0, colon), decoded.slice(colon + 1))) return 'basic';
    }
  }
  throw redfishError(401, 'NoValidSession', [], { 'WWW-Authenticate': 'Basic realm="Redfish"' });
}

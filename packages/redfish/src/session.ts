import { RedfishError } from './errors.js';
import type { RedfishCredentials, RedfishLogger } from './options.js';
import { headerValue } from '@fleet/http';
import type { HttpMethod, RedfishResponse } from './transport.js';

/** The path of the session a login created, from its Location or @odata.id; undefined when that is no URI. */
function sessionPath(location: unknown): string | undefined {
  if (typeof location !== 'string' || !location) return undefined;
  try {
    return new URL(location, 'http://x').pathname;
  } catch {
    return undefined;
  }
}

/** What the session manager needs from the client: unserialised requests and the discovered Sessions URI. */
export interface SessionIo {
  readonly bmc: string;
  perform(spec: {
    method: HttpMethod;
    uri: string;
    json?: unknown;
    headers?: Record<string, string>;
    authenticate: false;
  }): Promise<RedfishResponse>;
  sessionsUri(): Promise<string>;
}

interface Session {
  token: string;
  uri: string | undefined;
}

/**
 * One SessionService session per client. BMCs cap their sessions (iDRAC: 8; perf-anchors §4)
 * and only free a leaked one after its timeout, so: creation is serialised (callers that
 * arrive while one is being created wait for it), a session is re-created only after the
 * BMC rejects it with 401 (then it is already gone), and close() deletes it.
 */
export class SessionAuth {
  private session: Session | undefined;
  private creating: Promise<Session> | undefined;
  private closed = false;

  constructor(
    private readonly io: SessionIo,
    private readonly credentials: RedfishCredentials,
    private readonly logger?: RedfishLogger,
  ) {}

  /** The token to send, creating the session on first use. */
  async token(): Promise<string> {
    if (this.closed) throw new RedfishError('FailedPrecondition', this.io.bmc, '', 'client is closed');
    if (this.session) return this.session.token;
    this.creating ??= this.create().finally(() => (this.creating = undefined));
    return (await this.creating).token;
  }

  /** The BMC answered 401 to this token: forget it, so the next call logs in again. */
  invalidate(token: string): void {
    if (this.session?.token === token) this.session = undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
    const session = this.session ?? (await this.creating?.catch(() => undefined));
    this.session = undefined;
    if (!session?.uri) return;
    try {
      await this.io.perform({
        method: 'DELETE',
        uri: session.uri,
        headers: { 'x-auth-token': session.token },
        authenticate: false,
      });
    } catch (err) {
      // Already expired or removed is fine; anything else leaves a session until the BMC times it out.
      if (err instanceof RedfishError && (err.status === 401 || err.status === 404)) return;
      this.logger?.warn(
        { bmc: this.io.bmc, uri: session.uri, err: (err as Error).message },
        'Redfish session logout failed',
      );
    }
  }

  /**
   * The login POST is not idempotent: each success takes a session slot on the BMC. The
   * client resends it only when the BMC certainly did not act (no connection, or 503);
   * after a timeout or reset mid-request it gives up rather than risk a second session.
   */
  private async create(): Promise<Session> {
    const uri = await this.io.sessionsUri();
    const res = await this.io.perform({
      method: 'POST',
      uri,
      json: { UserName: this.credentials.username, Password: this.credentials.password },
      authenticate: false,
    });
    const token = headerValue(res.headers, 'x-auth-token');
    const location = sessionPath(
      headerValue(res.headers, 'location') ?? (res.body as { '@odata.id'?: unknown } | null | undefined)?.['@odata.id'],
    );
    if (!token) {
      if (location) {
        await this.io.perform({ method: 'DELETE', uri: location, authenticate: false }).catch(() => undefined);
      }
      throw new RedfishError('Protocol', this.io.bmc, uri, 'session created without an X-Auth-Token header');
    }
    const session = { token, uri: location };
    if (this.closed) {
      // close() raced the login: log straight out again rather than leak the session.
      this.session = session;
      await this.close();
      throw new RedfishError('FailedPrecondition', this.io.bmc, uri, 'client closed during login');
    }
    this.session = session;
    return session;
  }
}

import { Agent, type Dispatcher } from 'undici';
import { backoffMs, deviceConnector, headerValue, sleep } from '@fleet/http';
import { RedfishError } from './errors.js';
import { defaults, type RedfishClientOptions } from './options.js';
import { SessionAuth } from './session.js';
import { exchange, ExchangeFailure, type BodySource, type HttpMethod, type RedfishResponse } from './transport.js';

export type { RedfishResponse, BodySource, HttpMethod } from './transport.js';

export interface Link {
  '@odata.id': string;
}

/** The service root, the only resource whose path the client knows in advance. */
export interface ServiceRoot {
  '@odata.id'?: string;
  Systems?: Link;
  Chassis?: Link;
  Managers?: Link;
  UpdateService?: Link;
  SessionService?: Link;
  AccountService?: Link;
  Tasks?: Link;
  Links?: { Sessions?: Link };
  /** What the service takes of DSP0266's query parameters (only `$expand` is used). */
  ProtocolFeaturesSupported?: { ExpandQuery?: { NoLinks?: unknown } };
  [key: string]: unknown;
}

export const serviceRootUri = '/redfish/v1';

interface RequestSpec {
  method: HttpMethod;
  uri: string;
  json?: unknown;
  body?: BodySource;
  headers?: Record<string, string>;
  /** false for the login itself, the unauthenticated service root and logout. */
  authenticate?: boolean;
  timeoutMs?: number;
}

/**
 * Redfish over undici for one BMC.
 *
 * - One request at a time per BMC (a promise chain): BMCs serve requests serially and
 *   fall over when flooded (docs/reference/rms-behaviours.md#one-request-per-bmc). An optional SiteLimiter caps a whole
 *   site.
 * - Retries with jittered exponential backoff on connection errors and 503 (honouring
 *   Retry-After), never on other 4xx. A request that may have reached the BMC (reset or
 *   timeout after sending) is resent only if it is idempotent (GET, PUT, PATCH, DELETE):
 *   a POST action or upload that might have been applied is reported, never sent twice.
 * - Discovery starts at /redfish/v1 and follows @odata.id links; links and what else only a
 *   reset changes (ActionInfo, the UpdateService's push URI and limits) are cached, resource
 *   bodies are not. A 404 or 503 on a cached link triggers one re-discovery (a push, only a 404:
 *   see pushFirmware).
 */
export class RedfishClient {
  readonly bmc: string;
  /** The inventory device this BMC is (options.device), for errors that must name it. */
  readonly device: string | undefined;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly session: SessionAuth | undefined;
  private readonly basicAuth: string;
  private tail: Promise<void> = Promise.resolve();
  private readonly memo = new Map<string, Promise<unknown>>();
  /** Whether this client followed what the process's shared discovery held (then a 404 or 503 re-discovers). */
  private usedShared = false;
  private closed = false;

  constructor(private readonly opts: RedfishClientOptions) {
    this.bmc = opts.baseUrl;
    this.device = opts.device;
    const userPass = `${opts.credentials.username}:${opts.credentials.password}`;
    this.basicAuth = `Basic ${Buffer.from(userPass).toString('base64')}`;
    this.ownsDispatcher = !opts.dispatcher;
    this.dispatcher =
      opts.dispatcher ??
      new Agent({
        connect: deviceConnector(
          {
            logKey: 'bmc',
            id: opts.baseUrl,
            insecureWarning: 'Redfish TLS verification disabled for this BMC (insecure)',
          },
          opts.tls,
          opts.connectTimeoutMs ?? defaults.connectTimeoutMs,
          opts.logger,
        ),
        connections: 1,
      });
    if (opts.auth === 'session') {
      this.session = new SessionAuth(
        {
          bmc: this.bmc,
          perform: (spec) => this.perform(spec),
          sessionsUri: () => this.sessionsUri(),
        },
        opts.credentials,
        opts.logger,
      );
    }
  }

  /** A resource: Internal when the BMC answers with anything but a JSON object. */
  async get<T>(uri: string): Promise<T> {
    return this.resourceOf<T>(await this.request({ method: 'GET', uri }), uri);
  }

  /** A resource with its ETag (header, else @odata.etag), for a later conditional PATCH. */
  async getWithEtag<T>(uri: string): Promise<{ body: T; etag: string | undefined }> {
    const res = await this.request({ method: 'GET', uri });
    return { body: this.resourceOf<T>(res, uri), etag: etagOf(res) };
  }

  async post(uri: string, body: unknown): Promise<unknown> {
    return (await this.request({ method: 'POST', uri, json: body })).body;
  }

  /** POST returning status and headers too (Location of a created resource or task monitor). */
  async postForResponse(uri: string, body: unknown): Promise<RedfishResponse> {
    return this.request({ method: 'POST', uri, json: body });
  }

  /**
   * PATCH guarded by If-Match, so a concurrent change by someone else fails with 412
   * (FailedPrecondition) instead of being overwritten. Without an explicit etag the
   * current one is read first, in the same turn of this BMC's queue.
   */
  async patch(uri: string, body: unknown, opts: { etag?: string } = {}): Promise<unknown> {
    return this.enqueue(async () => {
      const etag = opts.etag ?? etagOf(await this.perform({ method: 'GET', uri }));
      const res = await this.perform({
        method: 'PATCH',
        uri,
        json: body,
        ...(etag ? { headers: { 'if-match': etag } } : {}),
      });
      return res.body;
    });
  }

  async delete(uri: string): Promise<void> {
    await this.request({ method: 'DELETE', uri });
  }

  /** Streams a request body (firmware) under the upload timeout rather than the request timeout. */
  async upload(uri: string, body: BodySource): Promise<RedfishResponse> {
    return this.request({
      method: 'POST',
      uri,
      body,
      timeoutMs: this.opts.uploadTimeoutMs ?? defaults.uploadTimeoutMs,
    });
  }

  /** The service root, fetched once and kept until invalidate(). */
  async root(): Promise<ServiceRoot> {
    return this.enqueue(() => this.loadRoot());
  }

  /**
   * A URI found by discovery, kept under `key` until invalidate(). Resource bodies (power
   * state, task state) are always read fresh.
   */
  link(key: string, resolve: () => Promise<string>): Promise<string> {
    return this.cached(`link:${key}`, resolve);
  }

  /**
   * A value that only changes when the BMC is reset or re-flashed (the service root, a discovered link, an
   * ActionInfo), kept under `key` until invalidate(). A failed resolve is not kept.
   */
  cached<T>(key: string, resolve: () => Promise<T>): Promise<T> {
    const shared = this.sharedValue<T>(key);
    if (shared !== undefined) return Promise.resolve(shared);
    let p = this.memo.get(key) as Promise<T> | undefined;
    if (!p) {
      const generation = this.opts.discovery?.generation(this.bmc) ?? 0;
      const fresh = resolve();
      p = fresh;
      this.memo.set(key, fresh);
      fresh.then(
        // Shared once resolved, unless an invalidate() came in the meantime.
        (value) => {
          if (this.memo.get(key) === fresh) this.opts.discovery?.set(this.bmc, key, value, generation);
        },
        () => {
          if (this.memo.get(key) === fresh) this.memo.delete(key);
        },
      );
    }
    return p;
  }

  /**
   * As cached(), but a value `keep` rejects is returned and not kept (an answer lacking what makes it worth keeping,
   * such as a service without the link wanted, is read again next time).
   */
  async cachedIf<T>(key: string, resolve: () => Promise<T>, keep: (value: T) => boolean): Promise<T> {
    try {
      return await this.cached(key, async () => {
        const value = await resolve();
        if (!keep(value)) throw new NotKept(value);
        return value;
      });
    } catch (err) {
      if (err instanceof NotKept) return err.value as T;
      throw err;
    }
  }

  /** Whether `key` holds a value (or one is being resolved) since the last invalidate(). */
  isCached(key: string): boolean {
    return this.memo.has(key) || (this.opts.discovery?.has(this.bmc, key) ?? false);
  }

  /**
   * Forgets discovered links and cached ActionInfo, this client's and what the process shares for this BMC; call after
   * a BMC reset or firmware activation.
   */
  invalidate(): void {
    this.memo.clear();
    this.usedShared = false;
    this.opts.discovery?.forget(this.bmc);
  }

  /**
   * Runs an operation that follows discovered links. If it fails with 404 or 503 while
   * using cached links (the BMC was reset or re-enumerated since), discovery restarts
   * from the service root and the operation runs once more.
   */
  async discovered<T>(op: () => Promise<T>): Promise<T> {
    const warm = this.memo.size > 0;
    try {
      return await op();
    } catch (err) {
      // Links this client found before, or the process's shared ones it followed (before or during the operation).
      const stale = warm || this.usedShared;
      if (!stale || !(err instanceof RedfishError) || (err.status !== 404 && err.status !== 503)) throw err;
      this.invalidate();
      return op();
    }
  }

  /** Waits for queued calls, logs out of the session (if any) and releases connections. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.tail;
    await this.session?.close();
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  /** Readers index into what get() returns: a truncated, empty or non-object answer must not reach them. */
  private resourceOf<T>(res: RedfishResponse, uri: string): T {
    const b = res.body;
    if (b !== null && typeof b === 'object' && !Array.isArray(b)) return b as T;
    const what =
      b === undefined ? 'an empty body' : typeof b === 'string' ? 'a body that is not JSON' : `JSON ${kindOf(b)}`;
    throw new RedfishError('Protocol', this.bmc, uri, `answered HTTP ${res.status} with ${what}, not a resource`);
  }

  /**
   * The URL of a link the BMC gave. Links are the BMC's own resources: one naming another host (or not a URL at all)
   * is refused, so credentials never follow a broken or hostile link elsewhere.
   */
  private urlOf(uri: string): URL {
    let url: URL | undefined;
    try {
      url = typeof uri === 'string' ? new URL(uri, this.opts.baseUrl) : undefined;
    } catch {
      url = undefined;
    }
    if (!url) throw new RedfishError('Protocol', this.bmc, JSON.stringify(uri), 'link is not a URI');
    if (url.origin !== new URL(this.opts.baseUrl).origin)
      throw new RedfishError('Protocol', this.bmc, uri, `link leads off this BMC (to ${url.origin}); not followed`);
    return url;
  }

  private request(spec: RequestSpec): Promise<RedfishResponse> {
    return this.enqueue(() => this.perform(spec));
  }

  private enqueue<T>(job: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new RedfishError('FailedPrecondition', this.bmc, '', 'client is closed'));
    const run = this.tail.then(job);
    // The queue keeps no answer: a client cached per device for hours would otherwise hold its last resource body.
    this.tail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  private loadRoot(): Promise<ServiceRoot> {
    // Session mode reads the root unauthenticated (Redfish requires that), as the login URI comes from it; a BMC may
    // show less to an anonymous reader, so the two are kept apart.
    return this.cached(this.session ? 'root:anonymous' : 'root', () =>
      this.perform({ method: 'GET', uri: serviceRootUri, authenticate: !this.session }).then((r) =>
        this.resourceOf<ServiceRoot>(r, serviceRootUri),
      ),
    );
  }

  /** What the process's shared discovery holds under `key` for this BMC; using it makes this client's links warm. */
  private sharedValue<T>(key: string): T | undefined {
    const value = this.opts.discovery?.get(this.bmc, key) as T | undefined;
    if (value !== undefined) this.usedShared = true;
    return value;
  }

  private async sessionsUri(): Promise<string> {
    const uri: unknown = (await this.loadRoot()).Links?.Sessions?.['@odata.id'];
    if (typeof uri !== 'string' || !uri)
      throw new RedfishError(
        'FailedPrecondition',
        this.bmc,
        serviceRootUri,
        'service root advertises no Links.Sessions',
      );
    return uri;
  }

  /** One logical request: authentication, site slot, retries. Not serialised; callers go through enqueue(). */
  private async perform(spec: RequestSpec): Promise<RedfishResponse> {
    const maxAttempts = this.opts.maxAttempts ?? defaults.maxAttempts;
    const maxDelay = this.opts.maxRetryDelayMs ?? defaults.maxRetryDelayMs;
    const idempotent = spec.method !== 'POST';
    let reauthenticated = false;
    for (let attempt = 1; ; attempt++) {
      const token = spec.authenticate !== false && this.session ? await this.session.token() : undefined;
      const auth: Record<string, string> =
        spec.authenticate === false ? {} : token ? { 'x-auth-token': token } : { authorization: this.basicAuth };
      try {
        return await this.once(spec, auth);
      } catch (err) {
        if (!(err instanceof ExchangeFailure)) throw err;
        // The BMC refused or dropped the connection: it may be rebooting (a reset, a firmware update, an AC cycle),
        // and what it says after may differ from what this client or the process found before. (A timeout is a slow or
        // hung BMC: discovering again would only load it more.)
        if (err.error.status === undefined && err.error.code === 'Unavailable') this.invalidate();
        // A 401 on a session token means the BMC dropped the session (timeout, reboot): the
        // request was not processed, so log in again and resend it, once.
        if (token && err.error.status === 401 && !reauthenticated) {
          reauthenticated = true;
          this.session?.invalidate(token);
          attempt--;
          continue;
        }
        const mayRetry = err.retry === 'safe' || (err.retry === 'idempotent' && idempotent);
        if (!mayRetry || attempt >= maxAttempts) {
          if (err.retry === 'idempotent' && !idempotent) {
            throw annotate(err.error, 'may have reached the BMC; not resent because the request is not idempotent');
          }
          throw err.error;
        }
        const base = this.opts.retryBaseDelayMs ?? defaults.retryBaseDelayMs;
        await sleep(err.retryAfterMs ?? backoffMs(attempt, base, maxDelay), this.opts.signal);
      }
    }
  }

  private async once(spec: RequestSpec, auth: Record<string, string>): Promise<RedfishResponse> {
    const json = spec.json === undefined ? undefined : JSON.stringify(spec.json);
    const body: BodySource | undefined =
      spec.body ??
      (json === undefined
        ? undefined
        : { contentType: 'application/json', length: Buffer.byteLength(json), open: () => json });
    const url = this.urlOf(spec.uri);
    const release = await this.opts.siteLimiter?.acquire(this.opts.signal);
    try {
      return await exchange(
        this.dispatcher,
        this.bmc,
        {
          method: spec.method,
          url,
          headers: { ...auth, ...spec.headers },
          ...(body ? { body } : {}),
          timeoutMs: spec.timeoutMs ?? this.opts.requestTimeoutMs ?? defaults.requestTimeoutMs,
          ...(this.opts.signal ? { signal: this.opts.signal } : {}),
          maxResponseBytes: this.opts.maxResponseBytes ?? defaults.maxResponseBytes,
        },
        this.opts.maxRetryDelayMs ?? defaults.maxRetryDelayMs,
      );
    } finally {
      release?.();
    }
  }
}

function etagOf(res: RedfishResponse): string | undefined {
  const inBody = (res.body as { '@odata.etag'?: unknown } | null | undefined)?.['@odata.etag'];
  return headerValue(res.headers, 'etag') ?? (typeof inBody === 'string' ? inBody : undefined);
}

const kindOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

function annotate(error: RedfishError, note: string): RedfishError {
  return new RedfishError(error.code, error.bmc, error.uri, `${error.causeText} (${note})`, error.status);
}

/** A resolved value that cachedIf() hands back without keeping it (a failed resolve is not kept). */
class NotKept {
  constructor(readonly value: unknown) {}
}

import { Agent, type Dispatcher } from 'undici';
import { NvueError } from './errors.js';
import { BASE_PATH, defaults, type NvueClientOptions, type NvueCredentials } from './options.js';
import { anySignal, backoffMs, deviceConnector, sleep } from '@fleet/http';
import { exchange, ExchangeFailure, type HttpMethod, type NvueResponse } from './transport.js';

export type { NvueResponse, HttpMethod } from './transport.js';

export interface CallOptions {
  /** Query parameters, e.g. `{ rev: '7' }`. */
  query?: Record<string, string>;
  /** Cancels this call (the client's own signal applies too). */
  signal?: AbortSignal;
}

/**
 * NVUE REST over undici for one switch. Paths are relative to /nvue_v1 (`/system/image`).
 *
 * - One request at a time per switch (a promise chain): NVUE serialises configuration and
 *   a switch is one small control CPU; callers may still issue calls concurrently.
 * - Basic auth on every request (NVUE has no session API).
 * - Retries with jittered exponential backoff on connection failures and 503 (honouring
 *   Retry-After). A request that may have reached the switch (timeout or reset after
 *   sending) is resent only if idempotent (GET, PATCH): an action POST that might have
 *   started is reported, never sent twice.
 */
export class NvueClient {
  readonly switchId: string;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private credentials: NvueCredentials;
  private auth: string;
  private tail: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(private readonly opts: NvueClientOptions) {
    this.switchId = opts.switchId ?? opts.baseUrl;
    this.credentials = opts.credentials;
    this.auth = basic(opts.credentials);
    this.ownsDispatcher = !opts.dispatcher;
    this.dispatcher =
      opts.dispatcher ??
      new Agent({
        connect: deviceConnector(
          {
            logKey: 'switchId',
            id: this.switchId,
            insecureWarning: 'NVUE TLS verification disabled for this switch (insecure)',
          },
          opts.tls,
          opts.connectTimeoutMs ?? defaults.connectTimeoutMs,
          opts.logger,
        ),
        connections: 1,
      });
  }

  async get<T = unknown>(path: string, opts: CallOptions = {}): Promise<T> {
    return (await this.request('GET', path, undefined, opts)).body as T;
  }

  /** A resource that must be a JSON object: anything else (empty, truncated, a list) is a Protocol error. */
  async getObject<T extends object = Record<string, unknown>>(path: string, opts: CallOptions = {}): Promise<T> {
    const res = await this.request('GET', path, undefined, opts);
    const b = res.body;
    if (b !== null && typeof b === 'object' && !Array.isArray(b)) return b as T;
    const what =
      b === undefined ? 'an empty body' : typeof b === 'string' ? 'a body that is not JSON' : `JSON ${kindOf(b)}`;
    throw new NvueError(
      'Protocol',
      this.switchId,
      'GET',
      this.uri(path, opts.query),
      `answered HTTP ${res.status} with ${what} where an object was expected`,
    );
  }

  async post(path: string, body: unknown, opts: CallOptions = {}): Promise<NvueResponse> {
    return this.request('POST', path, body, opts);
  }

  async patch(path: string, body: unknown, opts: CallOptions = {}): Promise<unknown> {
    return (await this.request('PATCH', path, body, opts)).body;
  }

  /** The user the client logs in as. */
  get username(): string {
    return this.credentials.username;
  }

  /**
   * Logs in with other credentials from the next request on (after rotating its own password); returns the previous
   * ones.
   */
  useCredentials(credentials: NvueCredentials): NvueCredentials {
    const previous = this.credentials;
    this.credentials = credentials;
    this.auth = basic(credentials);
    return previous;
  }

  /** The URI a call addresses, as errors name it. */
  uri(path: string, query?: Record<string, string>): string {
    const q = query ? new URLSearchParams(query).toString() : '';
    return `${BASE_PATH}${path}${q ? `?${q}` : ''}`;
  }

  /** Waits for queued calls and releases connections. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.tail;
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  private request(method: HttpMethod, path: string, body: unknown, opts: CallOptions): Promise<NvueResponse> {
    if (this.closed)
      return Promise.reject(
        new NvueError('Internal', this.switchId, method, this.uri(path, opts.query), 'client is closed'),
      );
    const run = this.tail.then(() => this.perform(method, path, body, opts));
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async perform(method: HttpMethod, path: string, body: unknown, opts: CallOptions): Promise<NvueResponse> {
    const maxAttempts = this.opts.maxAttempts ?? defaults.maxAttempts;
    const maxDelay = this.opts.maxRetryDelayMs ?? defaults.maxRetryDelayMs;
    const signal = anySignal(this.opts.signal, opts.signal);
    const json = body === undefined ? undefined : JSON.stringify(body);
    const url = new URL(this.uri(path, opts.query), this.opts.baseUrl);
    for (let attempt = 1; ; attempt++) {
      try {
        return await exchange(
          this.dispatcher,
          this.switchId,
          {
            method,
            url,
            headers: { authorization: this.auth },
            ...(json === undefined ? {} : { json }),
            timeoutMs: this.opts.requestTimeoutMs ?? defaults.requestTimeoutMs,
            maxResponseBytes: this.opts.maxResponseBytes ?? defaults.maxResponseBytes,
            ...(signal ? { signal } : {}),
          },
          maxDelay,
        );
      } catch (err) {
        if (!(err instanceof ExchangeFailure)) throw err;
        const idempotent = method !== 'POST';
        const mayRetry = err.retry === 'safe' || (err.retry === 'idempotent' && idempotent);
        if (!mayRetry || attempt >= maxAttempts) {
          if (err.retry === 'idempotent' && !idempotent)
            throw annotate(err.error, 'may have reached the switch; not resent because the request is not idempotent');
          throw err.error;
        }
        await sleep(
          err.retryAfterMs ?? backoffMs(attempt, this.opts.retryBaseDelayMs ?? defaults.retryBaseDelayMs, maxDelay),
          signal,
        );
      }
    }
  }
}

const kindOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

const basic = (c: NvueCredentials) => `Basic ${Buffer.from(`${c.username}:${c.password}`).toString('base64')}`;

function annotate(e: NvueError, note: string): NvueError {
  return new NvueError(e.kind, e.switchId, e.method, e.uri, `${e.causeText} (${note})`, {
    ...(e.status ? { status: e.status } : {}),
    cause: e.cause,
  });
}

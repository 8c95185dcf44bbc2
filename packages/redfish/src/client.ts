import { Agent, errors as undiciErrors, request, type Dispatcher } from 'undici';
import { codeForStatus, messageFromBody, RedfishError } from './errors.js';

export interface RedfishCredentials {
  username: string;
  password: string;
}

export interface RedfishClientOptions {
  /** e.g. https://10.0.0.5 or http://127.1.0.7:8000 */
  baseUrl: string;
  credentials: RedfishCredentials;
  connectTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** Attempts on connection errors and 503 before giving up. */
  maxAttempts?: number;
  dispatcher?: Dispatcher;
  signal?: AbortSignal;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), reject(signal.reason)), { once: true });
  });

/**
 * Redfish over undici. One request at a time per BMC (BMCs serve requests serially
 * and fall over when flooded); retries with jittered backoff on connection errors and
 * 503 (honouring Retry-After), never on other 4xx.
 */
export class RedfishClient {
  private readonly auth: string;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(private readonly opts: RedfishClientOptions) {
    this.auth = `Basic ${Buffer.from(`${opts.credentials.username}:${opts.credentials.password}`).toString('base64')}`;
    this.ownsDispatcher = !opts.dispatcher;
    this.dispatcher =
      opts.dispatcher ??
      new Agent({
        connect: { timeout: opts.connectTimeoutMs ?? 10_000 },
        headersTimeout: opts.requestTimeoutMs ?? 30_000,
        bodyTimeout: opts.requestTimeoutMs ?? 30_000,
        connections: 1,
      });
  }

  get bmc(): string {
    return this.opts.baseUrl;
  }

  async get<T>(uri: string): Promise<T> {
    return (await this.call('GET', uri)) as T;
  }

  async post(uri: string, body: unknown): Promise<unknown> {
    return this.call('POST', uri, body);
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  private call(method: 'GET' | 'POST', uri: string, body?: unknown): Promise<unknown> {
    const run = this.tail.then(() => this.withRetry(method, uri, body));
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async withRetry(method: 'GET' | 'POST', uri: string, body?: unknown): Promise<unknown> {
    const attempts = this.opts.maxAttempts ?? 3;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once(method, uri, body);
      } catch (err) {
        if (!(err instanceof RetryableFailure) || attempt >= attempts) throw err instanceof RetryableFailure ? err.error : err;
        const backoff = err.retryAfterMs ?? Math.min(8_000, 250 * 2 ** (attempt - 1)) * (0.5 + Math.random());
        await sleep(backoff, this.opts.signal);
      }
    }
  }

  private async once(method: 'GET' | 'POST', uri: string, body?: unknown): Promise<unknown> {
    const url = new URL(uri, this.opts.baseUrl);
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, {
        method,
        dispatcher: this.dispatcher,
        headers: {
          authorization: this.auth,
          accept: 'application/json',
          'odata-version': '4.0',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        ...(this.opts.signal ? { signal: this.opts.signal } : {}),
      });
    } catch (err) {
      if (this.opts.signal?.aborted) throw err;
      const timeout =
        err instanceof undiciErrors.ConnectTimeoutError ||
        err instanceof undiciErrors.HeadersTimeoutError ||
        err instanceof undiciErrors.BodyTimeoutError;
      const e = new RedfishError(timeout ? 'Timeout' : 'Unavailable', this.bmc, url.pathname, (err as Error).message);
      // A POST that timed out may have reached the BMC: do not send it twice.
      if (method === 'POST' && timeout) throw e;
      throw new RetryableFailure(e);
    }
    const text = await res.body.text();
    const parsed = text ? safeJson(text) : undefined;
    if (res.statusCode >= 200 && res.statusCode < 300) return parsed;
    const error = new RedfishError(
      codeForStatus(res.statusCode),
      this.bmc,
      url.pathname,
      messageFromBody(parsed) ?? `HTTP ${res.statusCode}`,
      res.statusCode,
    );
    if (res.statusCode === 503) throw new RetryableFailure(error, retryAfterMs(res.headers['retry-after']));
    throw error;
  }
}

class RetryableFailure {
  constructor(
    readonly error: RedfishError,
    readonly retryAfterMs?: number,
  ) {}
}

function retryAfterMs(header: string | string[] | undefined): number | undefined {
  const v = Array.isArray(header) ? header[0] : header;
  if (!v) return undefined;
  const s = Number(v);
  if (Number.isFinite(s)) return Math.min(s, 60) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.min(at - Date.now(), 60_000));
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

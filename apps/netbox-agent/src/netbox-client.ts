import { Agent, request, type Dispatcher } from 'undici';

export class NetboxError extends Error {
  constructor(
    readonly url: string,
    readonly status: number | undefined,
    readonly causeText: string,
  ) {
    super(`NetBox ${status ?? 'unreachable'}: ${url}: ${causeText}`);
    this.name = 'NetboxError';
  }
  /** A rejected token or missing permission: retrying will not help until someone fixes it. */
  get authFailure(): boolean {
    return this.status === 401 || this.status === 403;
  }
}

export interface Page<T> {
  count: number | null;
  next: string | null;
  results: T[];
}

/**
 * A small NetBox REST reader over undici. Lists use cursor pagination (`?start=`,
 * NetBox ≥ 4.6): ordered by id, so objects created or deleted between pages are
 * neither skipped nor repeated, and no page costs a COUNT.
 */
export class NetboxClient {
  requests = 0;
  /** NetBox's clock, from the Date header of its latest answer (watermarks use its time, not ours). */
  serverTime: Date | undefined;
  private readonly dispatcher: Dispatcher;
  private readonly auth: string;

  constructor(
    readonly baseUrl: string,
    token: string,
    private readonly opts: { pageSize: number; timeoutMs: number },
  ) {
    // v2 tokens (nbt_<key>.<secret>) are Bearer; legacy 40-hex tokens use the Token scheme.
    this.auth = token.startsWith('nbt_') ? `Bearer ${token}` : `Token ${token}`;
    this.dispatcher = new Agent({
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
      connect: { timeout: opts.timeoutMs },
    });
  }

  async get<T>(path: string, params: Record<string, string | string[]> = {}): Promise<T> {
    const url = new URL(path, this.baseUrl);
    for (const [k, v] of Object.entries(params))
      for (const one of Array.isArray(v) ? v : [v]) url.searchParams.append(k, one);
    return this.getUrl<T>(url.toString());
  }

  async *list<T>(path: string, params: Record<string, string | string[]> = {}): AsyncGenerator<T[]> {
    let page = await this.get<Page<T>>(path, { ...params, start: '0', limit: String(this.opts.pageSize) });
    for (;;) {
      if (page.results.length) yield page.results;
      if (!page.next) return;
      page = await this.getUrl<Page<T>>(page.next);
    }
  }

  async all<T>(path: string, params: Record<string, string | string[]> = {}): Promise<T[]> {
    const out: T[] = [];
    for await (const page of this.list<T>(path, params)) out.push(...page);
    return out;
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }

  /** GETs are safe to repeat: a dropped connection or a 502/503/504 is retried with backoff. */
  private async getUrl<T>(url: string): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.getOnce<T>(url);
      } catch (err) {
        const transient =
          err instanceof NetboxError &&
          (err.status === undefined || err.status === 502 || err.status === 503 || err.status === 504);
        if (!transient || attempt >= 3) throw err;
        await new Promise((r) => setTimeout(r, 500 * 2 ** attempt));
      }
    }
  }

  private async getOnce<T>(url: string): Promise<T> {
    this.requests++;
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, {
        dispatcher: this.dispatcher,
        headers: { authorization: this.auth, accept: 'application/json' },
      });
    } catch (err) {
      throw new NetboxError(url, undefined, (err as Error).message);
    }
    const text = await res.body.text();
    const date = res.headers['date'];
    if (typeof date === 'string' && !Number.isNaN(Date.parse(date))) this.serverTime = new Date(date);
    if (res.statusCode !== 200) {
      let detail = text.slice(0, 300);
      try {
        detail = (JSON.parse(text) as { detail?: string }).detail ?? detail;
      } catch {
        // not JSON: keep the raw text
      }
      throw new NetboxError(url, res.statusCode, detail);
    }
    return JSON.parse(text) as T;
  }
}

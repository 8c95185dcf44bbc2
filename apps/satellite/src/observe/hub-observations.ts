import { request, type Dispatcher } from 'undici';
import type { BmcTarget, HealthChange } from '@fleet/domain';

export interface HubObservationsOptions {
  url: string;
  /** Resolved on each call, so a rotated token is picked up. */
  token: () => Promise<string>;
  dispatcher?: Dispatcher;
  timeoutMs?: number;
}

/** Readings per POST: the most the hub takes (maxReadingsPerBatch). */
export const deliveryBatch = 2000;
const targetPage = 1000;

/** A hub call that failed: the URL, the status when there was one, and the hub's answer. */
export class HubCallError extends Error {
  constructor(
    readonly url: string,
    readonly status: number | undefined,
    message: string,
  ) {
    super(`${url}: ${message}`);
    this.name = 'HubCallError';
  }
}

/**
 * The observer's side of the hub (docs/day2.md): the site's observable devices, a page at a time, and the delivery of
 * readings. The hub reads only Postgres; the observer is the one that talks to devices.
 */
export class HubObservations {
  private readonly base: string;
  constructor(private readonly opts: HubObservationsOptions) {
    this.base = opts.url.replace(/\/+$/, '');
  }

  /** Every device of the site the observer can read. */
  async targets(siteId: string, signal: AbortSignal): Promise<BmcTarget[]> {
    const out: BmcTarget[] = [];
    for (let cursor: string | null = ''; cursor !== null;) {
      const qs = `limit=${targetPage}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page = (await this.call('GET', `/v1/sites/${encodeURIComponent(siteId)}/observation-targets?${qs}`, {
        signal,
      })) as {
        items: {
          device_id: string;
          node_type: string;
          bmc_url: string;
          credential_ref: string;
          redfish_system_id: string | null;
        }[];
        next_cursor: string | null;
      };
      for (const t of page.items)
        out.push({
          deviceId: t.device_id,
          nodeType: t.node_type,
          bmcUrl: t.bmc_url,
          credentialRef: t.credential_ref,
          ...(t.redfish_system_id ? { redfishSystemId: t.redfish_system_id } : {}),
        });
      cursor = page.next_cursor;
    }
    return out;
  }

  /** Delivers up to deliveryBatch readings; the hub stores them in one transaction. */
  async deliver(siteId: string, changes: HealthChange[], signal: AbortSignal): Promise<{ unknown: string[] }> {
    const body = {
      readings: changes.map((c) => ({
        device_id: c.deviceId,
        observed_at: c.observedAt,
        reading: {
          reachable: c.reading.reachable,
          ...(c.reading.credentialsOk === undefined ? {} : { credentials_ok: c.reading.credentialsOk }),
          ...(c.reading.powerState === undefined ? {} : { power_state: c.reading.powerState }),
          faults: c.reading.faults,
        },
      })),
    };
    return (await this.call('POST', `/v1/sites/${encodeURIComponent(siteId)}/observations`, {
      signal,
      body: JSON.stringify(body),
    })) as { unknown: string[] };
  }

  private async call(
    method: 'GET' | 'POST',
    path: string,
    { signal, body }: { signal: AbortSignal; body?: string },
  ): Promise<unknown> {
    const url = `${this.base}${path}`;
    const timeout = this.opts.timeoutMs ?? 30_000;
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, {
        method,
        headers: {
          authorization: `Bearer ${await this.opts.token()}`,
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        ...(body ? { body } : {}),
        signal,
        headersTimeout: timeout,
        bodyTimeout: timeout,
        ...(this.opts.dispatcher ? { dispatcher: this.opts.dispatcher } : {}),
      });
    } catch (err) {
      if (signal.aborted) throw err;
      throw new HubCallError(url, undefined, (err as Error).message);
    }
    const text = await res.body.text();
    if (res.statusCode !== 200)
      throw new HubCallError(url, res.statusCode, `HTTP ${res.statusCode} ${text.slice(0, 500)}`);
    return JSON.parse(text) as unknown;
  }
}

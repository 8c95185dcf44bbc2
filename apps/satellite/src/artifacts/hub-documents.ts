import { ApplicationFailure } from '@temporalio/common';
import { request, type Dispatcher } from 'undici';
import type { InventoryDocumentStore } from '../activities/hardware-inventory.js';

export interface HubDocumentStoreOptions {
  /** The hub's base URL. */
  url: string;
  /** The hub token (resolved from the site's secret store on each call, so a rotated token is picked up). */
  token: () => Promise<string>;
  dispatcher?: Dispatcher;
  timeoutMs?: number;
}

/**
 * Inventory documents go to the hub the way firmware packages come from it: by sha256, over HTTP, into its
 * content-addressed store (PUT /v1/hardware-documents/{digest}); storing one twice is harmless. A failure names the
 * digest, the URL and the hub's answer, and is retryable unless the hub refused the request itself.
 */
export class HubDocumentStore implements InventoryDocumentStore {
  constructor(private readonly opts: HubDocumentStoreOptions) {}

  async put(digest: string, body: Buffer, { signal }: { signal: AbortSignal }): Promise<void> {
    const url = `${this.opts.url.replace(/\/+$/, '')}/v1/hardware-documents/${digest}`;
    let status: number;
    let answer: string;
    try {
      const res = await request(url, {
        method: 'PUT',
        headers: { authorization: `Bearer ${await this.opts.token()}`, 'content-type': 'application/octet-stream' },
        body,
        signal,
        headersTimeout: this.opts.timeoutMs ?? 30_000,
        bodyTimeout: this.opts.timeoutMs ?? 30_000,
        ...(this.opts.dispatcher ? { dispatcher: this.opts.dispatcher } : {}),
      });
      status = res.statusCode;
      answer = (await res.body.text()).slice(0, 500);
    } catch (err) {
      if (signal.aborted) throw err;
      throw ApplicationFailure.create({
        type: 'UNAVAILABLE',
        message: `storing inventory document ${digest} at ${url}: ${(err as Error).message}`,
        cause: err as Error,
      });
    }
    if (status === 200 || status === 201) return;
    // 4xx: this request will never be taken (a token without the role, a bad digest); 5xx may pass later.
    throw ApplicationFailure.create({
      type:
        status === 401
          ? 'UNAUTHENTICATED'
          : status === 403
            ? 'PERMISSION_DENIED'
            : status < 500
              ? 'INVALID_ARGUMENT'
              : 'UNAVAILABLE',
      message: `storing inventory document ${digest} at ${url}: HTTP ${status} ${answer}`,
      nonRetryable: status >= 400 && status < 500,
    });
  }
}

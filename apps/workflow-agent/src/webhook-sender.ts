import { createHmac } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { errorText } from '@fleet/config';
import { retryAfterMs } from '@fleet/http';
import { request, type Dispatcher } from 'undici';
import type { WebhookConfig } from './sla-config.js';

/** The headers every delivery carries (docs/sla.md says how a receiver checks them). */
export const webhookHeaders = {
  signature: 'x-fleet-signature',
  timestamp: 'x-fleet-timestamp',
  delivery: 'x-fleet-delivery',
  event: 'x-fleet-event',
} as const;

/** Characters of a failed answer's body kept in last_error. */
const answerExcerpt = 300;
const minSecretLength = 16;

/**
 * `sha256=<hex>`: HMAC-SHA256 with the webhook's secret over `<timestamp>.<raw body>`. The timestamp (Unix seconds,
 * also sent as X-Fleet-Timestamp) is signed with the body, so a receiver that refuses old timestamps refuses replays.
 */
export function signWebhook(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** One attempt's outcome: delivered (a 2xx), or why not, and how long the receiver asked us to wait. */
export interface SendOutcome {
  delivered: boolean;
  status?: number;
  error?: string;
  retryAfterS?: number;
}

/** The secret from its file, trimmed; the error names the file, never its content. */
export async function readWebhookSecret(file: string): Promise<string> {
  let secret: string;
  try {
    secret = (await readFile(file, 'utf8')).trim();
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code ?? errorText(err);
    throw new Error(`cannot read the secret file ${file}: ${why}`, { cause: err });
  }
  if (secret.length < minSecretLength) throw new Error(`the secret in ${file} is shorter than ${minSecretLength}`);
  return secret;
}

/** At most `limit` characters of a body; the rest is not read. */
async function excerpt(body: Dispatcher.ResponseData['body'], limit: number): Promise<string> {
  let text = '';
  for await (const chunk of body) {
    text += (chunk as Buffer).toString('utf8');
    if (text.length >= limit) {
      body.destroy();
      break;
    }
  }
  return text.slice(0, limit).replace(/\s+/g, ' ').trim();
}

/**
 * POSTs one delivery's JSON body, signed, once. Redirects are not followed (a 3xx is a failed attempt): a receiver
 * that moved is a config change, and following one would send the signed body wherever it points.
 */
export async function sendWebhook(
  webhook: Pick<WebhookConfig, 'url' | 'secretFile' | 'timeoutS'>,
  delivery: { id: string; event: string; payload: unknown },
  options: { dispatcher?: Dispatcher; now?: () => number } = {},
): Promise<SendOutcome> {
  let secret: string;
  try {
    secret = await readWebhookSecret(webhook.secretFile);
  } catch (err) {
    return { delivered: false, error: (err as Error).message };
  }
  const body = JSON.stringify(delivery.payload);
  const timestamp = Math.floor((options.now?.() ?? Date.now()) / 1000);
  const timeoutMs = webhook.timeoutS * 1000;
  try {
    const res = await request(webhook.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'fleet-workflow-agent',
        [webhookHeaders.event]: delivery.event,
        [webhookHeaders.delivery]: delivery.id,
        [webhookHeaders.timestamp]: String(timestamp),
        [webhookHeaders.signature]: signWebhook(secret, timestamp, body),
      },
      body,
      signal: AbortSignal.timeout(timeoutMs),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    });
    if (res.statusCode >= 200 && res.statusCode < 300) {
      await res.body.dump();
      return { delivered: true, status: res.statusCode };
    }
    const retryAfter = retryAfterMs(res.headers['retry-after'], 86_400_000);
    const text = await excerpt(res.body, answerExcerpt);
    return {
      delivered: false,
      status: res.statusCode,
      error: `HTTP ${res.statusCode}${text ? `: ${text}` : ''}`,
      ...(retryAfter !== undefined ? { retryAfterS: retryAfter / 1000 } : {}),
    };
  } catch (err) {
    const e = err as Error;
    const timedOut = e.name === 'TimeoutError' || e.name === 'HeadersTimeoutError' || e.name === 'BodyTimeoutError';
    return { delivered: false, error: timedOut ? `no answer within ${webhook.timeoutS} s` : errorText(err) };
  }
}

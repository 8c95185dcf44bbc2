import { classifyTransportError, parseJsonOrText, requestSignal } from '@fleet/http';
import { request, type Dispatcher } from 'undici';
import type { z } from 'zod';
import { describeSlurmErrors, kindFor, SlurmError, type SlurmApiError } from './errors.js';
import { envelopeSchema } from './schema.js';

export type HttpMethod = 'GET' | 'POST' | 'DELETE';

export interface ExchangeSpec {
  method: HttpMethod;
  url: URL;
  headers: Record<string, string>;
  json?: unknown;
  timeoutMs: number;
  signal?: AbortSignal;
}

function apiErrors(body: unknown): SlurmApiError[] {
  const parsed = envelopeSchema.safeParse(body);
  if (!parsed.success) return [];
  return parsed.data.errors.map((e) => ({
    code: e.error_code ?? e.error_number,
    error: e.error,
    description: e.description,
    source: e.source,
  }));
}

/**
 * One request to slurmrestd, its answer checked against `schema`. Every failure is a SlurmError: no answer,
 * a non-2xx status, a non-empty `errors` array (even on 200), or an answer of another shape.
 */
export async function exchange<S extends z.ZodType>(
  dispatcher: Dispatcher,
  spec: ExchangeSpec,
  schema: S,
): Promise<z.infer<S>> {
  const where = spec.url.href;
  const { deadline, signal, release } = requestSignal(spec.timeoutMs, spec.signal);
  let status: number;
  let text: string;
  try {
    const res = await request(spec.url, {
      method: spec.method,
      dispatcher,
      headers: {
        accept: 'application/json',
        ...spec.headers,
        ...(spec.json !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(spec.json !== undefined ? { body: JSON.stringify(spec.json) } : {}),
      headersTimeout: spec.timeoutMs,
      bodyTimeout: spec.timeoutMs,
      signal,
    });
    status = res.statusCode;
    text = await res.body.text();
  } catch (err) {
    const failure = classifyTransportError(err, { caller: spec.signal, deadline, timeoutMs: spec.timeoutMs });
    if ('cancelled' in failure) throw failure.cancelled;
    const kind = failure.kind === 'Timeout' ? 'Timeout' : 'Unavailable';
    throw new SlurmError(kind, spec.method, where, failure.message, { cause: failure.cause });
  } finally {
    release();
  }
  // 401 and unknown paths come back as text/plain ("Authentication failure").
  const body = text ? parseJsonOrText(text) : undefined;
  const errors = apiErrors(body);
  if (status < 200 || status >= 300 || errors.length > 0) {
    const cause = describeSlurmErrors(errors) ?? (typeof body === 'string' && body.trim() ? body.trim() : undefined);
    throw new SlurmError(kindFor(status, errors), spec.method, where, cause ?? `HTTP ${status}`, {
      status,
      slurmErrors: errors,
    });
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const detail = issue ? `${issue.path.join('.') || '(body)'}: ${issue.message}` : 'unreadable';
    throw new SlurmError('Protocol', spec.method, where, `unexpected answer: ${detail}`, { status });
  }
  return parsed.data;
}

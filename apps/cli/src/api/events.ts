import { ApiError } from '@fleet/client';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { Hub } from './hub.js';

/** One event of the hub's stream (GET /v1/events): `job`, `device` or `campaign`, its data parsed. */
export interface HubEvent {
  type: string;
  id: string | undefined;
  data: Record<string, unknown>;
}

export type EventStreamState = 'connecting' | 'open' | 'unsupported' | 'down';

/**
 * The hub's Server-Sent Events, kept open in the background: a dropped stream reconnects with Last-Event-ID so no
 * event is lost between connections. A hub without the stream (404) ends in state `unsupported`, which callers
 * answer by polling.
 */
export class EventStream {
  state: EventStreamState = 'connecting';
  private lastEventId: string | undefined;
  private retryMs = 1000;
  private readonly abort = new AbortController();

  constructor(
    private readonly hub: Hub,
    private readonly onEvent: (event: HubEvent) => void,
    private readonly onState: (state: EventStreamState) => void = () => undefined,
  ) {
    void this.run();
  }

  close(): void {
    this.abort.abort();
  }

  private setState(state: EventStreamState): void {
    if (this.state === state) return;
    this.state = state;
    this.onState(state);
  }

  private async run(): Promise<void> {
    while (!this.abort.signal.aborted) {
      try {
        const ended = await this.connect();
        if (ended === 'unsupported') return this.setState('unsupported');
      } catch (err) {
        if (this.abort.signal.aborted) return;
        if (err instanceof ApiError && err.status < 500) {
          // A refusal (401, 403) will not go away by retrying: poll instead.
          return this.setState('unsupported');
        }
      }
      this.setState('down');
      await sleep(this.retryMs, this.abort.signal);
    }
  }

  private async connect(): Promise<'ended' | 'unsupported'> {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (this.lastEventId) headers['Last-Event-ID'] = this.lastEventId;
    const response = await this.hub.fetch('/v1/events', { headers, signal: this.abort.signal });
    if (response.status === 404 || response.status === 405) {
      await response.body?.cancel();
      return 'unsupported';
    }
    if (!response.ok || !response.body) {
      const text = await response.text().catch(() => '');
      throw ApiError.from(response, safeJson(text) ?? text);
    }
    this.setState('open');
    const parser = createParser({
      onEvent: (message) => this.deliver(message),
      onRetry: (ms) => (this.retryMs = Math.min(Math.max(ms, 100), 30_000)),
    });
    const decoder = new TextDecoder();
    for await (const chunk of response.body) parser.feed(decoder.decode(chunk, { stream: true }));
    return 'ended';
  }

  private deliver(message: EventSourceMessage): void {
    if (message.id) this.lastEventId = message.id;
    const data = safeJson(message.data);
    if (typeof data !== 'object' || data === null) return;
    this.onEvent({ type: message.event ?? 'message', id: message.id, data: data as Record<string, unknown> });
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
}

import { createContext, useContext, useEffect, useState } from 'react';
import type { QueryClient, QueryKey } from '@tanstack/react-query';
import { authHeaders } from './client';
import { keysFor } from './event-keys';
import { EventStreamParser, type ServerEvent } from './sse';

/**
 * open: the hub's event stream is connected and invalidates queries as things change;
 * connecting / down: it is (re)connecting, queries poll meanwhile;
 * unavailable: the hub has no event stream (404) or refused it, queries poll.
 */
export type LiveState = 'connecting' | 'open' | 'down' | 'unavailable';

export const LiveContext = createContext<LiveState>('unavailable');

/** A refetchInterval: `ms` while the event stream is not open; while it is, `whileLiveMs` or none. */
export function usePollInterval(ms: number, whileLiveMs?: number): number | false {
  return useContext(LiveContext) === 'open' ? (whileLiveMs ?? false) : ms;
}

export function useLiveState(): LiveState {
  return useContext(LiveContext);
}

const maxBackoffMs = 30_000;
const flushMs = 250;

/**
 * Follows GET /v1/events (text/event-stream) and invalidates the queries each event touches. fetch rather than
 * EventSource: EventSource cannot send the Authorization header, and the token must not go into the URL.
 * Reconnects with Last-Event-ID after a drop; a 404 (no stream on this hub) or 401/403 leaves polling only.
 */
export function useLiveEvents(queryClient: QueryClient, token: string | null): LiveState {
  const [state, setState] = useState<LiveState>('connecting');
  useEffect(() => {
    if (!token) return;
    const abort = new AbortController();
    let lastEventId: string | undefined;
    let backoff = 1000;
    const pending = new Map<string, QueryKey>();
    let flushTimer: number | undefined;
    const flush = () => {
      flushTimer = undefined;
      for (const key of pending.values()) void queryClient.invalidateQueries({ queryKey: key });
      pending.clear();
    };
    const onEvent = (event: ServerEvent) => {
      if (event.id !== undefined) lastEventId = event.id;
      for (const key of keysFor(event)) pending.set(JSON.stringify(key), key);
      flushTimer ??= window.setTimeout(flush, flushMs);
    };

    const connect = async (): Promise<void> => {
      while (!abort.signal.aborted) {
        setState((s) => (s === 'open' ? 'down' : s));
        try {
          const response = await fetch('/v1/events', {
            headers: {
              ...authHeaders(),
              Accept: 'text/event-stream',
              ...(lastEventId !== undefined ? { 'Last-Event-ID': lastEventId } : {}),
            },
            signal: abort.signal,
          });
          if ([401, 403, 404, 405].includes(response.status)) return setState('unavailable');
          if (!response.ok || !response.body) throw new Error(`event stream answered ${response.status}`);
          setState('open');
          backoff = 1000;
          // Whatever changed while the stream was down is unknown: refetch what is shown.
          void queryClient.invalidateQueries();
          const parser = new EventStreamParser();
          const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            parser.push(value).forEach(onEvent);
          }
        } catch {
          if (abort.signal.aborted) return;
        }
        setState('down');
        await new Promise((resolve) => window.setTimeout(resolve, backoff));
        backoff = Math.min(backoff * 2, maxBackoffMs);
      }
    };
    void connect();
    return () => {
      abort.abort();
      if (flushTimer !== undefined) window.clearTimeout(flushTimer);
    };
  }, [queryClient, token]);
  return state;
}

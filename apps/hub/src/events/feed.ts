import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { listenForEvents, pruneEvents, type Db, type EventListener, type EventType, type FleetEvent } from '@fleet/db';
import { SseStream } from './sse-stream.js';

export interface FeedTimings {
  /** Comment lines that keep idle streams (and the proxies between) open. */
  heartbeatMs: number;
  /** How often old events are pruned, and what is kept: a day, and at most the newest 100,000. */
  pruneEveryMs: number;
  keepS: number;
  keepRows: number;
}

const defaults: FeedTimings = { heartbeatMs: 15_000, pruneEveryMs: 600_000, keepS: 86_400, keepRows: 100_000 };

/**
 * The hub's live-update feed: ONE Postgres connection LISTENs on fleet_events (opened on the first client, kept
 * afterwards) and fans each event out to every open stream. Events are numbered in commit order by their triggers
 * (migration 0010_event_triggers), so a stream never needs more than `id > last seen` to catch up. When the
 * connection is lost every stream is ended: clients reconnect with Last-Event-ID and are replayed from the table.
 */
export class EventFeed {
  private readonly streams = new Set<SseStream>();
  /** The connections streams were sent on (theirs alone): a client gone quiet can keep one open after its stream. */
  private readonly sockets = new Set<Socket>();
  private listener: EventListener | undefined;
  private starting: Promise<void> | undefined;
  private newest = 0;
  private closed = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly timings: FeedTimings;

  constructor(
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
    timings: Partial<FeedTimings> = {},
  ) {
    this.timings = { ...defaults, ...timings };
    // Pruned whether or not anyone listens: the triggers write events all the same.
    const prune = setInterval(() => void this.prune(), this.timings.pruneEveryMs);
    const heartbeat = setInterval(() => {
      for (const s of this.streams) s.comment('heartbeat');
    }, this.timings.heartbeatMs);
    this.timers.push(prune.unref(), heartbeat.unref());
  }

  /** Resolves once the feed listens; a client must not be answered before, or it could miss what happens next. */
  ready(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the hub is shutting down'));
    if (this.listener) return Promise.resolve();
    this.starting ??= this.start().finally(() => (this.starting = undefined));
    return this.starting;
  }

  /** A stream for `res`, holding live events until its replay is sent (SseStream.goLive). */
  subscribe(res: ServerResponse, types: ReadonlySet<EventType> | undefined): SseStream {
    const stream = new SseStream(res, types, (reason) => {
      this.streams.delete(stream);
      this.log.warn({ reason }, 'dropped a slow event stream client');
    });
    this.streams.add(stream);
    res.once('close', () => this.streams.delete(stream));
    const socket = res.socket;
    if (socket) {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    }
    return stream;
  }

  get clients(): number {
    return this.streams.size;
  }

  /** Ends every stream and the listening connection (SIGTERM drain: open streams must not hold the shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    this.endStreams();
    for (const socket of this.sockets) socket.destroy();
    await this.starting?.catch(() => undefined);
    await this.listener?.close();
    this.listener = undefined;
  }

  private async start(): Promise<void> {
    const listener = await listenForEvents(
      this.db,
      (event) => this.publish(event),
      (err) => this.lost(err),
    );
    if (this.closed) return listener.close();
    this.listener = listener;
  }

  private publish(event: FleetEvent): void {
    // NOTIFY arrives in commit order, which is id order; anything else would be a repeat.
    if (event.eventId <= this.newest) return;
    this.newest = event.eventId;
    for (const s of this.streams) s.offer(event);
  }

  private lost(err: Error): void {
    this.log.warn({ err: err.message }, 'event listener lost; ending streams, which resume with Last-Event-ID');
    this.listener = undefined;
    this.endStreams();
  }

  private endStreams(): void {
    for (const s of this.streams) s.end();
    this.streams.clear();
  }

  private async prune(): Promise<void> {
    try {
      const n = await pruneEvents(this.db, this.timings.keepS, this.timings.keepRows);
      if (n) this.log.info({ events: n }, 'pruned old events');
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'could not prune events');
    }
  }
}

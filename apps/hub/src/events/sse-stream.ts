import type { ServerResponse } from 'node:http';
import type { EventType, FleetEvent } from '@fleet/db';

/** What one client may have queued, unsent, before it is dropped as too slow (it reconnects and is replayed). */
const MAX_BUFFERED_BYTES = 1 << 20;
/** Live events held while the client's replay is read from Postgres. */
const MAX_HELD_EVENTS = 10_000;

/**
 * One client's Server-Sent Events stream. Events arriving while its Last-Event-ID replay is read are held, then sent
 * after the replay without repeats; a client that does not read what it is sent is dropped rather than buffered for.
 */
export class SseStream {
  private lastSent = 0;
  private held: FleetEvent[] | undefined = [];

  constructor(
    private readonly res: ServerResponse,
    private readonly types: ReadonlySet<EventType> | undefined,
    private readonly onDrop: (reason: string) => void,
  ) {}

  get open(): boolean {
    return !this.res.destroyed && !this.res.writableEnded;
  }

  /** A live event from the feed. */
  offer(event: FleetEvent): void {
    if (!this.held) return this.send(event);
    if (this.held.push(event) > MAX_HELD_EVENTS) this.drop('too many events while replaying');
  }

  /** Sends the replay, then what arrived meanwhile; from now on events go straight out. */
  goLive(replay: FleetEvent[]): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const event of [...replay, ...held]) this.send(event);
  }

  /** The client is too far behind (or from another database): it must reload; it follows live from `newest` on. */
  reset(newest: number, reason: string): void {
    this.lastSent = newest;
    this.write(`id: ${newest}\nevent: reset\ndata: ${JSON.stringify({ reason })}\n\n`);
    this.goLive([]);
  }

  comment(text: string): void {
    this.write(`: ${text}\n\n`);
  }

  end(): void {
    if (this.open) this.res.end();
  }

  private send(event: FleetEvent): void {
    if (event.eventId <= this.lastSent) return;
    this.lastSent = event.eventId;
    if (this.types && !this.types.has(event.type)) return;
    const data = JSON.stringify({ type: event.type, id: event.id, ...event.data });
    this.write(`id: ${event.eventId}\nevent: ${event.type}\ndata: ${data}\n\n`);
  }

  private write(chunk: string): void {
    if (!this.open) return;
    this.res.write(chunk);
    if (this.res.writableLength > MAX_BUFFERED_BYTES) this.drop(`${this.res.writableLength} bytes unread`);
  }

  private drop(reason: string): void {
    this.res.destroy();
    this.onDrop(reason);
  }
}

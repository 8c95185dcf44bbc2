import { timingSafeEqual } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';

/** The header each subscription asks BMCs to send with every push; its value is the satellite's event token. */
export const eventTokenHeader = 'X-Fleet-Event-Token';

/** What became of one push: the label of the satellite's events counter. */
export type PushOutcome = 'accepted' | 'unauthorized' | 'too_large' | 'malformed' | 'unmapped' | 'not_allowed';

export interface EventListenerOptions {
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  /** The secret BMCs send in eventTokenHeader. Never logged. */
  token: string;
  maxBodyBytes: number;
  /** PEM certificate and key: HTTPS, so the token does not cross the network in clear. */
  tls?: { cert: string; key: string };
  log: Logger;
  onPush?: (outcome: PushOutcome) => void;
}

/** Takes the Context of an event; false when it names no device being observed. */
export type EventSink = (context: string) => boolean;

/**
 * The endpoint BMCs POST Redfish Events to (docs/day2.md, "Event subscriptions"). It checks the token, bounds the body,
 * hands each event's Context to the observer attached, and answers at once: the device is read later, by the observer,
 * so a slow BMC never holds a push open. An event nobody takes is still answered 2xx (polling covers the device), so
 * the BMC does not retry it.
 */
export class EventListener {
  private sink: EventSink | undefined;
  private readonly token: Buffer;

  private constructor(
    private readonly server: Server,
    private readonly opts: EventListenerOptions,
  ) {
    this.token = Buffer.from(opts.token);
  }

  static async start(opts: EventListenerOptions): Promise<EventListener> {
    const server = opts.tls ? createHttpsServer({ cert: opts.tls.cert, key: opts.tls.key }) : createHttpServer();
    const listener = new EventListener(server, opts);
    server.on('request', (req, res) => listener.handle(req, res));
    server.headersTimeout = 10_000;
    server.requestTimeout = 15_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port, opts.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    opts.log.info({ host: opts.host, port: listener.port, tls: Boolean(opts.tls) }, 'event listener started');
    return listener;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** The running observer takes events until the returned function detaches it. One observer at a time. */
  attach(sink: EventSink): () => void {
    this.sink = sink;
    return () => {
      if (this.sink === sink) this.sink = undefined;
    };
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const done = (status: number, outcome: PushOutcome) => {
      this.opts.onPush?.(outcome);
      res.writeHead(status, status === 405 ? { allow: 'POST' } : {}).end();
    };
    if (req.method !== 'POST') return done(405, 'not_allowed');
    if (!this.authorized(req.headers[eventTokenHeader.toLowerCase()])) {
      req.resume();
      return done(401, 'unauthorized');
    }
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > this.opts.maxBodyBytes) {
      res.setHeader('connection', 'close');
      return done(413, 'too_large');
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > this.opts.maxBodyBytes) {
        res.setHeader('connection', 'close');
        done(413, 'too_large');
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on('end', () => {
      const context = contextOf(Buffer.concat(chunks));
      if (context === undefined) return done(400, 'malformed');
      const taken = this.sink?.(context) ?? false;
      // 204 either way: an event nobody takes is not worth the BMC's retries.
      done(204, taken ? 'accepted' : 'unmapped');
    });
    req.on('error', () => undefined);
  }

  private authorized(value: string | string[] | undefined): boolean {
    if (typeof value !== 'string') return false;
    const given = Buffer.from(value);
    return given.length === this.token.length && timingSafeEqual(given, this.token);
  }
}

/** The Context of a Redfish Event payload (Event.Context), if the body is one. */
function contextOf(body: Buffer): string | undefined {
  try {
    const event = JSON.parse(body.toString('utf8')) as { Context?: unknown } | null;
    return typeof event?.Context === 'string' ? event.Context : undefined;
  } catch {
    return undefined;
  }
}

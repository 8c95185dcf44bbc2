import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { eventBounds, eventTypes, listEventsAfter, type Db, type EventType } from '@fleet/db';
import { ApiError } from '../errors.js';
import type { EventFeed } from '../events/feed.js';
import { defineRoute, type ApiDoc } from '../route.js';
import { parse } from '../validation.js';

/** The most events a reconnecting client is replayed; further behind, it gets a reset and reloads. */
const MAX_REPLAY = 10_000;

const typeList = new RegExp(`^(${eventTypes.join('|')})(,(${eventTypes.join('|')}))*$`);
const EventQuery = z
  .object({
    types: z
      .string()
      .regex(typeList, `must be a comma-separated list of ${eventTypes.join(', ')}`)
      .optional()
      .describe('Only these kinds of event, e.g. job,device (default: all)'),
  })
  .strict();
const LastEventId = z.string().regex(/^\d{1,15}$/, 'must be the id of an event this stream sent (digits)');

export function eventRoutes(app: FastifyInstance, doc: ApiDoc, db: Db, feed: EventFeed): void {
  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/events',
      tag: 'events',
      summary:
        `Live updates as Server-Sent Events, from Postgres (never Temporal): \`event: ${eventTypes.join('|')}\`, ` +
        "`id:` the event number, `data:` {type, id, state fields} of the object that changed (a `health` event's id " +
        "is its device's; read the API for more). Reconnect with Last-Event-ID to be replayed what was missed; " +
        '`event: reset` means too much was missed: reload. Comment lines every 15 s keep it open',
      role: 'viewer',
      query: EventQuery,
      requestHeaders: {
        'Last-Event-ID': {
          description: 'The id of the last event received: the stream resumes after it',
          schema: LastEventId,
        },
      },
      success: {
        status: 200,
        description: 'The event stream (text/event-stream), open until the client leaves',
        body: 'event-stream',
      },
      errors: [400, 503],
    },
    async ({ request, reply, query }) => {
      const header = request.headers['last-event-id'];
      const lastEventId = header === undefined ? undefined : Number(parse(LastEventId, header, 'header.Last-Event-ID'));
      const types = query.types ? new Set(query.types.split(',') as EventType[]) : undefined;
      await feed.ready().catch((err: unknown) => {
        request.log.warn({ err: (err as Error).message }, 'event feed unavailable');
        throw new ApiError('UNAVAILABLE', 'live updates are unavailable right now; poll the API and retry later');
      });
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        // The connection is the stream's alone: it closes with it, so a shutdown finds no connection left open.
        connection: 'close',
        'x-accel-buffering': 'no',
        'x-request-id': String(request.id),
      });
      const stream = feed.subscribe(res, types);
      res.write('retry: 3000\n\n');
      try {
        if (lastEventId === undefined) return stream.goLive([]);
        const { oldest, newest } = await eventBounds(db);
        if (lastEventId > newest) return stream.reset(newest, `event ${lastEventId} is newer than any event here`);
        if (lastEventId < oldest - 1) return stream.reset(newest, `events after ${lastEventId} were pruned`);
        const replay = await listEventsAfter(db, lastEventId, MAX_REPLAY + 1, types && [...types]);
        if (replay.length > MAX_REPLAY) return stream.reset(newest, `more than ${MAX_REPLAY} events were missed`);
        stream.goLive(replay);
      } catch (err) {
        request.log.warn({ err: (err as Error).message }, 'could not replay events; ending the stream');
        res.destroy();
      }
    },
  );
}

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ErrorCode, type RoleRequirement } from '@fleet/domain';
import type { SiteScope } from './plugins/auth.js';
import type { CreateAnswer } from './services/idempotent-create.js';
import { parse } from './validation.js';

type Schema = z.ZodType | undefined;
type Infer<S extends Schema> = S extends z.ZodType ? z.infer<S> : undefined;

/** Headers a success response always sets, as the document names them. */
const headerDocs = {
  Location: 'Where the created resource, or the job that carries out the request, is',
  ETag: 'The version of the resource: send it back in If-Match (writes) or If-None-Match (reads)',
  'Accept-Ranges': 'bytes: the resource answers Range requests',
  'Cache-Control': 'The bytes behind a digest never change',
  'Content-Range': 'Which bytes of the blob the body holds',
} as const;
export type ResponseHeader = keyof typeof headerDocs;

/**
 * A success response: its status, what it carries (a JSON schema, raw bytes, or a Server-Sent Events stream), and the
 * headers it always sets.
 */
export type Reply =
  | { status: 204 | 304; description: string; headers?: ResponseHeader[] }
  | {
      status: 200 | 201 | 202 | 206;
      description: string;
      body: z.ZodType | 'bytes' | 'event-stream' | 'ndjson';
      headers?: ResponseHeader[];
    };

export interface RouteDef<Q extends Schema, B extends Schema, P extends Schema> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  summary: string;
  tag: string;
  /** Least role needed (or roles, any of which will do); absent means public. */
  role?: RoleRequirement;
  /** Whether tokens limited to some sites may call it, and how it keeps to theirs (plugins/auth.ts SiteScope). */
  sites?: SiteScope;
  params?: P;
  query?: Q;
  body?: B;
  /** Request headers the handler reads itself (a 400 names them as header.<Name>), for the document. */
  requestHeaders?: Record<string, { description: string; schema: z.ZodType }>;
  /**
   * Largest JSON body taken, in bytes: `smallBodyLimit` unless the route takes lists (`bulkBodyLimit`). A larger one
   * is a 413 before it is read whole. Streamed uploads (`rawBody`) set their own.
   */
  bodyLimit?: number;
  /** The media type of a body the handler reads itself as a stream, instead of a JSON `body`. */
  rawBody?: string;
  success: Reply;
  /** Other successes: 200 for a dry run, 206 for a range, 304 when not modified. */
  alsoSucceeds?: Reply[];
  /**
   * Failures particular to the route (409, 412, ...); 400, 401, 403, 404, 413, 415 and 429 are added where they can
   * occur.
   */
  errors?: number[];
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The media type a route's body must have; a 415 names it. */
    bodyType?: string;
  }
}

export interface RouteContext<Q extends Schema, B extends Schema, P extends Schema> {
  request: FastifyRequest;
  reply: FastifyReply;
  params: Infer<P>;
  query: Infer<Q>;
  body: Infer<B>;
}

/** The body of every failure (plugins/errors.ts answers in this shape, Fastify's own errors included). */
export const ErrorBody = z
  .object({
    error: z.object({
      code: ErrorCode,
      message: z.string(),
      /** The fields at fault, by where they were sent (body.name, query.limit, header.If-Match, ...). */
      details: z.array(z.object({ field: z.string().optional(), issue: z.string() })).optional(),
    }),
  })
  .meta({ id: 'Error' });

const statusText: Record<number, string> = {
  400: 'Invalid argument (details name the fields)',
  401: 'Missing or unknown bearer token',
  403: "Role too low for this action, or the target is outside the token's sites",
  404: 'Not found',
  409: 'Conflict or failed precondition',
  412: 'If-Match does not match the current version',
  413: 'Request body too large',
  415: 'Content-Type not accepted (the message names the one to send)',
  416: 'Range outside the resource',
  429: 'Rate limit reached: retry after the seconds in Retry-After',
  503: 'Unavailable for now: retry later',
};

/** Methods whose bodies Fastify parses, so a body of the wrong type or size is refused before the handler. */
const bodyMethods = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Every failure a route can answer, from what it takes and what it declares. */
function errorStatuses(def: RouteDef<Schema, Schema, Schema>): number[] {
  const takesBody = bodyMethods.has(def.method);
  return [
    ...(def.params || def.query || def.requestHeaders || takesBody ? [400] : []),
    ...(def.role ? [401, 403, 429] : []),
    ...(def.params ? [404] : []),
    ...(takesBody ? [413, 415] : []),
    ...(def.errors ?? []),
  ];
}

const componentRef = '#/components/schemas/';

/**
 * Collects the OpenAPI document from the same zod schemas that validate requests and describe responses. A schema
 * with an id (`.meta({ id: 'Job' })`) becomes one entry of `components.schemas` that every use refers to.
 */
export class ApiDoc {
  readonly paths: Record<string, Record<string, unknown>> = {};
  private readonly components: Record<string, unknown> = {};
  private readonly replies = new Map<string, Reply>();

  /** The success a route documents for `status` (`GET /v1/jobs/{id}`), for tests that hold answers to it. */
  reply(method: string, path: string, status: number): Reply | undefined {
    return this.replies.get(`${method.toUpperCase()} ${path} ${status}`);
  }

  /** A zod schema as JSON Schema, its named parts moved to the document's components. */
  private jsonSchema(schema: z.ZodType, io: 'input' | 'output'): unknown {
    const { $schema: _, $defs, ...root } = z.toJSONSchema(schema, { io, unrepresentable: 'any' });
    const refs = (value: object) => JSON.parse(JSON.stringify(value).replaceAll('"#/$defs/', `"${componentRef}`));
    for (const [id, def] of Object.entries($defs ?? {})) {
      const component = refs(def) as unknown;
      const known = this.components[id];
      if (known !== undefined && JSON.stringify(known) !== JSON.stringify(component))
        throw new Error(`two different schemas are named ${id} (a request and a response one?)`);
      this.components[id] = component;
    }
    return refs(root);
  }

  private response(reply: Reply): unknown {
    const body =
      'body' in reply
        ? reply.body === 'bytes'
          ? { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } }
          : reply.body === 'event-stream'
            ? { 'text/event-stream': { schema: { type: 'string', description: 'Server-Sent Events' } } }
            : reply.body === 'ndjson'
              ? { 'application/x-ndjson': { schema: { type: 'string', description: 'One JSON object per line' } } }
              : { 'application/json': { schema: this.jsonSchema(reply.body, 'output') } }
        : undefined;
    return {
      description: reply.description,
      ...(reply.headers?.length
        ? {
            headers: Object.fromEntries(
              reply.headers.map((h) => [h, { description: headerDocs[h], required: true, schema: { type: 'string' } }]),
            ),
          }
        : {}),
      ...(body ? { content: body } : {}),
    };
  }

  add(def: RouteDef<Schema, Schema, Schema>): void {
    const path = def.url.replace(/:(\w+)/g, '{$1}');
    const parameters: unknown[] = [];
    for (const [where, schema] of [
      ['path', def.params],
      ['query', def.query],
    ] as const) {
      if (!(schema instanceof z.ZodObject)) continue;
      for (const [name, field] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
        parameters.push({
          name,
          in: where,
          required: where === 'path' || !field.safeParse(undefined).success,
          schema: this.jsonSchema(field, 'input'),
        });
      }
    }
    for (const [name, header] of Object.entries(def.requestHeaders ?? {})) {
      parameters.push({
        name,
        in: 'header',
        required: false,
        description: header.description,
        schema: this.jsonSchema(header.schema, 'input'),
      });
    }
    const responses: Record<string, unknown> = {};
    for (const reply of [def.success, ...(def.alsoSucceeds ?? [])]) {
      responses[reply.status] = this.response(reply);
      this.replies.set(`${def.method} ${path} ${reply.status}`, reply);
    }
    for (const code of errorStatuses(def)) {
      responses[code] = {
        description: statusText[code] ?? 'Error',
        content: { 'application/json': { schema: this.jsonSchema(ErrorBody, 'output') } },
      };
    }
    (this.paths[path] ??= {})[def.method.toLowerCase()] = {
      summary: def.summary,
      tags: [def.tag],
      operationId: `${def.method.toLowerCase()}${path
        .replace(/[{}]/g, '')
        .replace(/\/(\w)/g, (_, c: string) => c.toUpperCase())
        .replace(/[^A-Za-z0-9]/g, '')}`,
      ...(def.role ? { security: [{ bearer: [] }], 'x-fleet-role': def.role } : {}),
      ...(def.sites ? { 'x-fleet-sites': def.sites } : {}),
      ...(parameters.length ? { parameters } : {}),
      ...(def.body
        ? {
            requestBody: {
              // A body every field of which is optional may be left out (an override that is rarely sent).
              required: !def.body.safeParse(undefined).success,
              content: { 'application/json': { schema: this.jsonSchema(def.body, 'input') } },
            },
          }
        : {}),
      ...(def.rawBody
        ? {
            requestBody: {
              required: true,
              content: { [def.rawBody]: { schema: { type: 'string', format: 'binary' } } },
            },
          }
        : {}),
      responses,
    };
  }

  document(): unknown {
    return {
      openapi: '3.1.0',
      info: {
        title: 'Fleet hub API',
        version: '1',
        description:
          'Reads the hub projection; mutations record intents and answer 202 with a job. Every failure ' +
          'answers {"error": {"code", "message", "details"}}; a method a path does not declare answers 405 ' +
          'with Allow.',
      },
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
        schemas: this.components,
      },
      paths: this.paths,
    };
  }
}

/** What a JSON body may weigh: a mutation's parameters, or a list of thousands of ids (campaigns, observations). */
export const smallBodyLimit = 64 * 1024;
export const bulkBodyLimit = 1024 * 1024;

/** Registers a route whose params, query and body are parsed (400 naming each bad field) and documented. */
export function defineRoute<Q extends Schema = undefined, B extends Schema = undefined, P extends Schema = undefined>(
  app: FastifyInstance,
  doc: ApiDoc,
  def: RouteDef<Q, B, P>,
  handler: (ctx: RouteContext<Q, B, P>) => Promise<unknown>,
): void {
  doc.add(def as RouteDef<Schema, Schema, Schema>);
  app.route({
    method: def.method,
    url: def.url,
    config: {
      ...(def.role ? { role: def.role } : {}),
      ...(def.sites ? { sites: def.sites } : {}),
      bodyType: def.rawBody ?? 'application/json',
    },
    ...(def.bodyLimit !== undefined || (def.body && !def.rawBody)
      ? { bodyLimit: def.bodyLimit ?? smallBodyLimit }
      : {}),
    handler: async (request, reply) =>
      handler({
        request,
        reply,
        params: (def.params ? parse(def.params, request.params, 'path') : undefined) as Infer<P>,
        query: (def.query ? parse(def.query, request.query ?? {}, 'query') : undefined) as Infer<Q>,
        body: (def.body ? parse(def.body, request.body, 'body') : undefined) as Infer<B>,
      }),
  });
}

/** Sends what an idempotent create answered; a replay says so (`idempotent-replayed: true`). */
export function sendCreated(reply: FastifyReply, created: { answer: CreateAnswer; replayed: boolean }): FastifyReply {
  const { answer, replayed } = created;
  return reply
    .status(answer.status)
    .headers({ ...answer.headers, ...(replayed ? { 'idempotent-replayed': 'true' } : {}) })
    .send(answer.body);
}

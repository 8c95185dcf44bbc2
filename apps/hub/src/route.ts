import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Role } from '@fleet/domain';
import { parse } from './validation.js';

type Schema = z.ZodType | undefined;
type Infer<S extends Schema> = S extends z.ZodType ? z.infer<S> : undefined;

export interface RouteDef<Q extends Schema, B extends Schema, P extends Schema> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  summary: string;
  tag: string;
  /** Least role needed; absent means public. */
  role?: Role;
  params?: P;
  query?: Q;
  body?: B;
  /** The media type of a body the handler reads itself as a stream, instead of a JSON `body`. */
  rawBody?: string;
  /** Success status and what it carries. */
  success: [number, string];
  /** Other successes: 200 for a dry run, 206 for a range, 304 when not modified. */
  alsoSucceeds?: [number, string][];
  /**
   * Failures particular to the route (409, 412, ...); 400, 401, 403, 404, 413 and 415 are added where they can occur.
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

const errorBody = {
  type: 'object',
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string' },
        message: { type: 'string' },
        details: {
          type: 'array',
          items: { type: 'object', properties: { field: { type: 'string' }, issue: { type: 'string' } } },
        },
      },
    },
  },
};

const statusText: Record<number, string> = {
  400: 'Invalid argument (details name the fields)',
  401: 'Missing or unknown bearer token',
  403: 'Role too low for this action',
  404: 'Not found',
  409: 'Conflict or failed precondition',
  412: 'If-Match does not match the current version',
  413: 'Request body too large',
  415: 'Content-Type not accepted (the message names the one to send)',
  416: 'Range outside the resource',
};

/** Methods whose bodies Fastify parses, so a body of the wrong type or size is refused before the handler. */
const bodyMethods = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Every failure a route can answer, from what it takes and what it declares. */
function errorStatuses(def: RouteDef<Schema, Schema, Schema>): number[] {
  const takesBody = bodyMethods.has(def.method);
  return [
    ...(def.params || def.query || takesBody ? [400] : []),
    ...(def.role ? [401, 403] : []),
    ...(def.params ? [404] : []),
    ...(takesBody ? [413, 415] : []),
    ...(def.errors ?? []),
  ];
}

const jsonSchema = (s: z.ZodType) => z.toJSONSchema(s, { io: 'input', unrepresentable: 'any' });

/** Collects the OpenAPI document from the same zod schemas that validate requests. */
export class ApiDoc {
  readonly paths: Record<string, Record<string, unknown>> = {};

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
          schema: jsonSchema(field),
        });
      }
    }
    const responses: Record<string, unknown> = {};
    for (const [code, description] of [def.success, ...(def.alsoSucceeds ?? [])]) responses[code] = { description };
    for (const code of errorStatuses(def)) {
      responses[code] = {
        description: statusText[code] ?? 'Error',
        content: { 'application/json': { schema: errorBody } },
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
      ...(parameters.length ? { parameters } : {}),
      ...(def.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(def.body) } } } }
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
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      paths: this.paths,
    };
  }
}

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
    config: { ...(def.role ? { role: def.role } : {}), bodyType: def.rawBody ?? 'application/json' },
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

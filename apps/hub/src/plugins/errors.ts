import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AxisWriterRefused, type ErrorBody, type ErrorCode, type ErrorDetail } from '@fleet/domain';
import { ApiError, domainRefusal } from '../errors.js';

const codeForStatus: Record<number, ErrorCode> = {
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
};

/** The field a Fastify 4xx is about, from its code (FST_ERR_CTP_* are about the body). */
function fieldOf(err: FastifyError): string {
  if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return 'header.Content-Type';
  if (err.code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH') return 'header.Content-Length';
  if (err.code === 'FST_ERR_BAD_URL') return 'path';
  return 'body';
}

/** A 4xx Fastify raised before the handler (body parsing, content type, URL), in Fleet's shape. */
function fastifyClientError(err: FastifyError, request: FastifyRequest): { status: number; body: ErrorBody } {
  const status = err.statusCode!;
  let message = err.message;
  if (status === 415) {
    const accepted = request.routeOptions.config.bodyType ?? 'application/json';
    message =
      `Content-Type ${request.headers['content-type'] ?? '(none)'} is not accepted here; send the body with ` +
      `"Content-Type: ${accepted}"`;
  }
  const details: ErrorDetail[] = [{ field: fieldOf(err), issue: message }];
  return { status, body: { error: { code: codeForStatus[status] ?? 'INVALID_ARGUMENT', message, details } } };
}

/** Path templates (`/v1/sites/:id`) as patterns, each with the methods it serves: what a 405's Allow lists. */
class RouteMethods {
  private readonly byPath = new Map<string, { pattern: RegExp; methods: Set<string> }>();

  add(url: string, methods: string | string[]): void {
    let entry = this.byPath.get(url);
    if (!entry) {
      const pattern = url
        .split('/')
        .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg === '*' ? '.*' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
        .join('/');
      entry = { pattern: new RegExp(`^${pattern}$`), methods: new Set() };
      this.byPath.set(url, entry);
    }
    for (const m of [methods].flat()) entry.methods.add(m.toUpperCase());
  }

  /** The methods served at a concrete path; empty when no route has it. */
  allowed(path: string): string[] {
    const methods = new Set<string>();
    for (const { pattern, methods: ms } of this.byPath.values())
      if (pattern.test(path)) ms.forEach((m) => methods.add(m));
    return [...methods].sort();
  }
}

/**
 * One error shape for every failure, Fastify's own included: `{"error": {"code", "message", "details"}}`.
 * A path served under other methods answers 405 with Allow; an unknown one 404.
 */
export function registerErrorHandling(app: FastifyInstance): void {
  const routes = new RouteMethods();
  app.addHook('onRoute', (route) => routes.add(route.url ?? route.path, route.method));

  /** No route for this method and path: 405 with Allow when the path is served under other methods, else 404. */
  const notServed = (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0]!;
    const allowed = routes.allowed(path);
    if (!allowed.length) {
      void reply.status(404).send({
        error: { code: 'NOT_FOUND', message: `no route ${request.method} ${request.url}` },
      } satisfies ErrorBody);
      return;
    }
    const message = `${request.method} is not served at ${path}; it serves ${allowed.join(', ')}`;
    void reply
      .status(405)
      .header('allow', allowed.join(', '))
      .send({
        error: { code: 'INVALID_ARGUMENT', message, details: [{ field: 'method', issue: message }] },
      } satisfies ErrorBody);
  };

  app.setErrorHandler((thrown: FastifyError | ApiError, request, reply) => {
    // A refusal of the domain's rules (an illegal lifecycle move, ...) answers as the ApiError it maps to.
    const err = domainRefusal(thrown) ?? thrown;
    if (thrown instanceof AxisWriterRefused)
      request.log.error({ err: thrown }, 'a component wrote an axis it does not own');
    // Fastify parses the body of an unrouted request too (QUERY without Content-Type is a 400): the route is what is
    // missing.
    if (request.is404 && !(err instanceof ApiError)) return notServed(request, reply);
    let body: ErrorBody;
    let status: number;
    if (err instanceof ApiError) {
      status = err.status;
      body = { error: { code: err.code, message: err.message, ...(err.details ? { details: err.details } : {}) } };
    } else if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) {
      ({ status, body } = fastifyClientError(err, request));
    } else {
      status = 500;
      request.log.error({ err }, 'unhandled error');
      body = {
        error: { code: 'INTERNAL', message: 'internal error; see the hub log for request ' + String(request.id) },
      };
    }
    if (status >= 500 && err instanceof ApiError) request.log.error({ err }, err.message);
    void reply.status(status).send(body);
  });

  app.setNotFoundHandler(notServed);
}

/** Errors Fastify answers before routing (a path that is not valid percent-encoding), in Fleet's shape. */
export function frameworkErrors(err: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const issue = err.code === 'FST_ERR_BAD_URL' ? 'is not valid percent-encoding' : err.message;
  void reply.status(400).send({
    error: { code: 'INVALID_ARGUMENT', message: `path: ${issue}`, details: [{ field: 'path', issue }] },
  } satisfies ErrorBody);
}

const clientErrorText: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'the request headers are too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'the request did not arrive in time'],
};

/** A `clientError` of Node's HTTP server: llhttp's code, and the bytes it read up to the error. */
type HttpParseError = Error & { code?: string; bytesParsed?: number; rawPacket?: unknown };

/** The header line an HTTP parse error stopped in, by the byte offset llhttp reports. */
function headerAt(err: HttpParseError): string | undefined {
  if (!Buffer.isBuffer(err.rawPacket) || err.bytesParsed === undefined) return undefined;
  const before = err.rawPacket.subarray(0, err.bytesParsed).toString('latin1');
  const line = before.slice(before.lastIndexOf('\n') + 1);
  const colon = line.indexOf(':');
  return colon > 0 && /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(line.slice(0, colon)) ? line.slice(0, colon) : undefined;
}

/**
 * Requests Node's HTTP parser refuses (a control character in a header, headers too large) never reach
 * a route: this answers them in Fleet's error shape instead of Fastify's, then closes the connection.
 */
export function clientErrorHandler(err: HttpParseError, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, issue] = clientErrorText[err.code ?? ''] ?? [
    400,
    `the request is not valid HTTP (${err.code ?? err.message}): header names and values must not contain ` +
      `control characters`,
  ];
  const header = status === 400 ? headerAt(err) : undefined;
  const field = header ? `header.${header}` : 'header';
  const body = JSON.stringify({
    error: { code: 'INVALID_ARGUMENT', message: `${field}: ${issue}`, details: [{ field, issue }] },
  } satisfies ErrorBody);
  if (socket.writable) {
    const reason =
      status === 400 ? 'Bad Request' : status === 431 ? 'Request Header Fields Too Large' : 'Request Timeout';
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}

/**
 * Properties of a database error that carry the values of a statement (drizzle's `params`, pg's `detail`
 * and `where`) or repeat its text: a log line must never hold them, whatever the value was.
 */
const statementKeys = new Set(['params', 'parameters', 'query', 'detail', 'where', 'internalQuery']);

/** Drizzle's message is `Failed query: <sql>\nparams: <values>`: the values go. */
const withoutParams = (text: string) => text.replace(/\nparams: [\s\S]*$/, '');

interface SerializedError {
  type: string;
  message: string;
  stack?: string;
  cause?: SerializedError | string;
  [key: string]: unknown;
}

/**
 * The hub logger's `err` serializer: an error's whole message, code and chain of causes, without the
 * parameter values of a failed statement (pino's default would print them all).
 */
export function serializeError(err: unknown, depth = 0): SerializedError | string {
  if (!(err instanceof Error)) return String(err);
  const message = withoutParams(err.message);
  const out: SerializedError = { type: err.name, message };
  const head = `${err.name}: ${err.message}`;
  if (err.stack?.startsWith(head)) out.stack = `${err.name}: ${message}${err.stack.slice(head.length)}`;
  for (const [key, value] of Object.entries(err)) {
    if (statementKeys.has(key) || key === 'cause' || value === undefined) continue;
    // AggregateError (a connection refused on every address) holds its errors in a list.
    out[key] = Array.isArray(value)
      ? value.map((v) => (v instanceof Error ? serializeError(v, depth + 1) : v))
      : value instanceof Error
        ? serializeError(value, depth + 1)
        : value;
  }
  if (err.cause !== undefined && depth < 5) out.cause = serializeError(err.cause, depth + 1);
  return out;
}

import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { paths } from './generated/api.js';

export interface FleetClientOptions {
  /** The hub's base URL, e.g. http://127.0.0.1:8080. */
  baseUrl: string;
  /** An API token (hub `admin-cli create-token`); without one the hub answers 401 on every /v1 route. */
  token?: string | undefined;
  /** Replaces the global fetch (tests, proxies). */
  fetch?: (request: Request) => Promise<Response>;
}

/** The hub's API, typed from its OpenAPI document: `client.GET('/v1/jobs/{id}', { params: { path: { id } } })`. */
export type FleetClient = Client<paths>;

export function createFleetClient(options: FleetClientOptions): FleetClient {
  return authenticated(createClient<paths>(clientOptions(options)), options.token);
}

/** Request options that send the body as it is (bytes: firmware uploads) instead of as JSON. */
export const octetStream = {
  bodySerializer: (body: unknown) => body,
  headers: { 'content-type': 'application/octet-stream' },
};

type Method = 'get' | 'put' | 'post' | 'delete' | 'options' | 'head' | 'patch' | 'trace';

/** What any JSON endpoint may take and answer, for paths the caller builds itself. */
interface UncheckedOperation {
  parameters: { query?: Record<string, unknown>; header?: Record<string, string>; path?: Record<string, string> };
  requestBody?: { content: { 'application/json': unknown } };
  responses: {
    200: { content: { 'application/json': unknown } };
    default: { content: { 'application/json': unknown } };
  };
}
export type UncheckedPaths = Record<string, Record<Method, UncheckedOperation>>;

/**
 * A client that takes any path and any JSON body, for callers that build paths themselves or must send what the
 * schema forbids (tests probing validation); everything else should use createFleetClient.
 */
export function createUncheckedClient(options: FleetClientOptions): Client<UncheckedPaths> {
  return authenticated(createClient<UncheckedPaths>(clientOptions(options)), options.token);
}

function clientOptions({ baseUrl, fetch }: FleetClientOptions) {
  return { baseUrl, ...(fetch ? { fetch } : {}) };
}

function authenticated<C extends Pick<Client<object>, 'use'>>(client: C, token: string | undefined): C {
  if (token) client.use(bearer(token));
  return client;
}

function bearer(token: string): Middleware {
  return {
    onRequest({ request }) {
      request.headers.set('Authorization', `Bearer ${token}`);
      return request;
    },
  };
}

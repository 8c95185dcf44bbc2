import { createFleetClient, createUncheckedClient, type FleetClient } from '@fleet/client';
import { currentToken } from './session';

// Same origin as the hub: the UI is served by it, so no CORS and no configured base URL.
const baseUrl = window.location.origin;

let cached: { token: string | null; client: FleetClient } | undefined;

/** The typed hub client for the signed-in token. */
export function api(): FleetClient {
  const token = currentToken();
  if (cached?.token !== token) cached = { token, client: createFleetClient({ baseUrl, token: token ?? undefined }) };
  return cached.client;
}

/** For hub paths the OpenAPI document does not list yet (e.g. /v1/whoami). */
export function uncheckedApi() {
  return createUncheckedClient({ baseUrl, token: currentToken() ?? undefined });
}

export function authHeaders(): Record<string, string> {
  const token = currentToken();
  return token ? { Authorization: `Bearer ${token}` } : {};
}

/** An Idempotency-Key for one user action: a retry of the same click reuses it, a new click gets a new one. */
export function idempotencyKey(): string {
  return crypto.randomUUID();
}

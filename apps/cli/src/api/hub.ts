import { readFileSync } from 'node:fs';
import { createFleetClient, createUncheckedClient, type FleetClient, type FleetClientOptions } from '@fleet/client';
import type { Agent } from 'undici';
import { HubUnreachableError, UsageError } from '../exit-codes.js';
import type { FleetContext } from '../config/config-file.js';

/** The hub as one context reaches it: the typed client, an unchecked one for generic paths, and raw fetch. */
export interface Hub {
  readonly url: string;
  readonly api: FleetClient;
  /** For paths built at run time (the `get` resource table) and routes newer than the generated client. */
  readonly raw: ReturnType<typeof createUncheckedClient>;
  /** A request with the context's token and TLS settings (streams: events). */
  fetch(path: string, init?: RequestInit): Promise<Response>;
}

export function connectHub(context: FleetContext, token: string | undefined): Hub {
  const url = context.hub.replace(/\/+$/, '');
  const send = hubFetch(url, context.ca);
  const options: FleetClientOptions = { baseUrl: url, token, fetch: send };
  return {
    url,
    api: createFleetClient(options),
    raw: createUncheckedClient(options),
    fetch: (path, init = {}) => {
      const headers = new Headers(init.headers);
      if (token) headers.set('Authorization', `Bearer ${token}`);
      return send(new Request(`${url}${path}`, { ...init, headers }));
    },
  };
}

/** fetch with the context's CA bundle, turning transport failures into HubUnreachableError (exit 4). */
function hubFetch(url: string, caFile: string | undefined): (request: Request) => Promise<Response> {
  let dispatcher: Promise<Agent> | undefined;
  if (caFile) {
    let ca: Buffer;
    try {
      ca = readFileSync(caFile);
    } catch (err) {
      throw new UsageError(`cannot read the context's CA bundle ${caFile}: ${(err as NodeJS.ErrnoException).code}`);
    }
    // undici is loaded only for contexts with their own CA: it is a tenth of a second of every start-up.
    dispatcher = import('undici').then(({ Agent }) => new Agent({ connect: { ca } }));
  }
  return async (request) => {
    const agent = await dispatcher;
    try {
      // Node's fetch takes an undici dispatcher; RequestInit's type does not name it.
      return await fetch(request, agent ? ({ dispatcher: agent } as unknown as RequestInit) : undefined);
    } catch (err) {
      if (request.signal.aborted) throw err;
      throw new HubUnreachableError(url, transportReason(err));
    }
  };
}

function transportReason(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message;
}

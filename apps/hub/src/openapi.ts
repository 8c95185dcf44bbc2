import { pino } from 'pino';
import { Registry } from 'prom-client';
import type { Db } from '@fleet/db';
import { buildHub } from './app.js';
import type { BlobStore } from './firmware/blob-store.js';

/** Stands in for a dependency the document never uses: registering routes must not touch it. */
function inert<T extends object>(what: string): T {
  return new Proxy({} as T, {
    get(_target, property) {
      throw new Error(`building the OpenAPI document used the ${what} (${String(property)})`);
    },
  });
}

/** The hub's OpenAPI document, with every route (firmware ones included), built without a database or network. */
export async function openapiDocument(): Promise<unknown> {
  const app = buildHub({
    db: inert<Db>('database'),
    log: pino({ level: 'silent' }),
    registry: new Registry(),
    views: { temporalNamespace: 'default' },
    firmware: { blobs: inert<BlobStore>('blob store'), maxPackageBytes: 1024 },
  });
  try {
    const response = await app.inject({ method: 'GET', url: '/openapi.json' });
    return response.json();
  } finally {
    await app.close();
  }
}

import pg from 'pg';
import type { Db } from './client.js';

export interface ChannelListener {
  close(): Promise<void>;
}

/**
 * LISTENs on `channel` over a connection of its own (the pool's settings, outside the pool). Resolves once listening;
 * `onEnd` is called once if the connection is lost (not after close).
 */
export async function listenOn(
  db: Db,
  channel: string,
  onPayload: (payload: string) => void,
  onEnd: (err: Error) => void,
): Promise<ChannelListener> {
  const client = new pg.Client({ ...db.$client.options, connectionTimeoutMillis: 5_000 });
  let closed = false;
  const ended = (err: Error) => {
    if (closed) return;
    closed = true;
    void client.end().catch(() => undefined);
    onEnd(err);
  };
  client.on('error', ended);
  client.on('end', () => ended(new Error(`${channel} listener connection closed`)));
  client.on('notification', (n) => {
    if (n.channel === channel && n.payload) onPayload(n.payload);
  });
  try {
    await client.connect();
    await client.query(`listen ${channel}`);
  } catch (err) {
    closed = true;
    await client.end().catch(() => undefined);
    throw err;
  }
  return {
    close: async () => {
      if (closed) return;
      closed = true;
      // A hung server must not hold the shutdown: the socket is destroyed if the goodbye takes too long.
      await Promise.race([client.end().catch(() => undefined), new Promise((r) => setTimeout(r, 1_000).unref())]);
    },
  };
}

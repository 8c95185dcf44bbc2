import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import type { FleetEvent } from '@fleet/db';
import { SseStream } from '../src/events/sse-stream.js';

// A client that stops reading must not make the hub buffer for it without bound: past 1 MiB unsent it is dropped
// (it reconnects with Last-Event-ID and is replayed from the table). Real sockets, so the kernel's buffers fill first.

const bigEvent = (eventId: number): FleetEvent => ({
  eventId,
  type: 'device',
  id: `device-${eventId}`,
  data: { padding: 'x'.repeat(64 * 1024) },
});

/** A server whose one request becomes an SseStream; `drops` collects the reasons it was dropped for. */
async function serveOneStream() {
  const drops: string[] = [];
  let resolveStream: (s: SseStream) => void = () => undefined;
  const stream = new Promise<SseStream>((r) => (resolveStream = r));
  const server = createServer((_req, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const s = new SseStream(res, undefined, (reason) => drops.push(reason));
    s.goLive([]);
    resolveStream(s);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { stream, drops, port: (server.address() as AddressInfo).port, close: () => server.close() };
}

describe('SseStream', () => {
  it('drops a client that stops reading once 1 MiB is unsent, and only then', { timeout: 30_000 }, async () => {
    const served = await serveOneStream();
    const socket = connect(served.port, '127.0.0.1');
    await once(socket, 'connect');
    socket.write('GET /v1/events HTTP/1.1\r\nHost: test\r\n\r\n');
    const stream = await served.stream;
    socket.pause(); // the slow client: connected, reading nothing

    let offered = 0;
    while (stream.open && offered < 2_000) {
      stream.offer(bigEvent(++offered));
      // Let the socket flush what the kernel takes, so only the truly unread part stays buffered.
      await new Promise((r) => setImmediate(r));
    }
    assert.equal(stream.open, false, 'the stream was dropped');
    assert.equal(served.drops.length, 1);
    assert.match(served.drops[0]!, /^\d+ bytes unread$/);
    assert.ok(Number(served.drops[0]!.split(' ')[0]) > 1 << 20, 'not before 1 MiB was waiting');
    assert.ok(offered > 16, `dropped after ${offered} events of 64 KiB: the kernel buffers took some first`);
    socket.destroy();
    served.close();
  });

  it('a client that reads keeps its stream however much is sent', { timeout: 30_000 }, async () => {
    const served = await serveOneStream();
    const socket = connect(served.port, '127.0.0.1');
    await once(socket, 'connect');
    let received = 0;
    socket.on('data', (chunk: Buffer) => (received += chunk.length));
    socket.write('GET /v1/events HTTP/1.1\r\nHost: test\r\n\r\n');
    const stream = await served.stream;
    for (let i = 1; i <= 200; i++) {
      stream.offer(bigEvent(i));
      if (i % 8 === 0) await new Promise((r) => setTimeout(r, 5));
    }
    while (received < 200 * 64 * 1024) await new Promise((r) => setTimeout(r, 10));
    assert.equal(stream.open, true);
    assert.deepEqual(served.drops, []);
    stream.end();
    socket.destroy();
    served.close();
  });
});

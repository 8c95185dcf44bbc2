import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { connectHub } from '../src/api/hub.js';
import { watch } from '../src/api/watch.js';

// How `job wait`, `--watch` and `logs --follow` learn that something changed: from the hub's event stream when it
// has one (an event wakes the reader at once, a dropped stream resumes with Last-Event-ID), by polling when not.

interface FakeHub {
  url: string;
  /** The Last-Event-ID of each /v1/events request. */
  connects: (string | undefined)[];
  /** Sends an event to the open stream. */
  emit: (id: number, type: string, data: object) => void;
  /** Ends the open stream, as a hub restart would. */
  drop: () => void;
  close: () => void;
}

async function fakeHub(withEvents: boolean): Promise<FakeHub> {
  const connects: (string | undefined)[] = [];
  let open: ServerResponse | undefined;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.url !== '/v1/events' || !withEvents) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"code":"NOT_FOUND"}}');
      return;
    }
    connects.push(req.headers['last-event-id'] as string | undefined);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(': hello\n\n');
    open = res;
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connects,
    emit: (id, type, data) => open?.write(`id: ${id}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`),
    drop: () => open?.end(),
    close: () => {
      open?.destroy();
      server.closeAllConnections();
      server.close();
    },
  };
}

const until = async (condition: () => boolean, what: string) => {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('watch', () => {
  it('wakes on a relevant event at once, not on others, and resumes a dropped stream from the last id', async () => {
    const hub = await fakeHub(true);
    let ticks = 0;
    let finish = false;
    // Polling intervals far beyond the test: only events can explain a tick.
    const watching = watch(
      connectHub({ hub: hub.url }, 't'),
      (e) => e.data['id'] === 'job-1',
      () => Promise.resolve((++ticks, finish)),
      { pollMs: 60_000, safetyPollMs: 60_000 },
    );
    await until(() => hub.connects.length === 1, 'the stream to open');
    // One read first, one more once the stream is open: what changed in between is not missed.
    await until(() => ticks === 2, 'the re-read when the stream opened');

    hub.emit(1, 'job', { id: 'job-2' });
    hub.emit(2, 'job', { id: 'job-1' });
    await until(() => ticks === 3, 'the relevant event to wake the watcher');
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(ticks, 3, 'the other job did not wake it');

    hub.drop();
    await until(() => hub.connects.length === 2, 'a reconnect');
    assert.deepEqual(hub.connects, [undefined, '2']);
    await new Promise((r) => setTimeout(r, 100));
    const beforeEvent = ticks;
    finish = true;
    hub.emit(3, 'job', { id: 'job-1' });
    await watching;
    assert.equal(ticks, beforeEvent + 1);
    hub.close();
  });

  it('polls when the hub has no event stream', async () => {
    const hub = await fakeHub(false);
    let ticks = 0;
    const started = Date.now();
    await watch(
      connectHub({ hub: hub.url }, 't'),
      () => true,
      () => Promise.resolve(++ticks === 4),
      { pollMs: 50, safetyPollMs: 60_000 },
    );
    assert.equal(ticks, 4);
    assert.ok(Date.now() - started < 5000);
    assert.deepEqual(hub.connects, []);
    hub.close();
  });
});

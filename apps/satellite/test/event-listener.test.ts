import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { Debouncer } from '../src/observe/debounce.js';
import { EventListener, eventTokenHeader, type PushOutcome } from '../src/observe/event-listener.js';
import { EventSubscriptions } from '../src/observe/event-subscriptions.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const token = 'a-token-of-the-satellite';

describe('event listener', () => {
  let listener: EventListener;
  const outcomes: PushOutcome[] = [];
  const taken: string[] = [];
  const logged: string[] = [];
  const subs = new EventSubscriptions({
    destination: 'http://sat.example:9100/events',
    token,
    siteId: 'site-a',
    recheckMs: 60_000,
    log: pino({ level: 'silent' }),
  });
  before(async () => {
    const log = pino({ level: 'trace' }, { write: (line: string) => void logged.push(line) });
    listener = await EventListener.start({
      host: '127.0.0.1',
      port: 0,
      token,
      maxBodyBytes: 4096,
      log,
      onPush: (o) => outcomes.push(o),
    });
    listener.attach((context) => {
      const id = subs.deviceOf(context);
      if (id === undefined) return false;
      taken.push(id);
      return true;
    });
  });
  after(() => listener.close());

  const push = (body: unknown, headers: Record<string, string> = { [eventTokenHeader]: token }) =>
    fetch(`http://127.0.0.1:${listener.port}/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const event = (context: string) => ({ '@odata.type': '#Event.v1_7_0.Event', Context: context, Events: [] });

  it("maps an event's Context to its device and answers 204", async () => {
    const res = await push(event(subs.contextOf('dev-1')));
    assert.equal(res.status, 204);
    assert.deepEqual(taken, ['dev-1']);
    assert.equal(outcomes.at(-1), 'accepted');
  });

  it('refuses a push without the token, or with another, with 401 and takes nothing', async () => {
    taken.length = 0;
    const refused: Record<string, string>[] = [
      {},
      { [eventTokenHeader]: 'wrong' },
      { [eventTokenHeader]: `${token}x` },
    ];
    for (const headers of refused) {
      const res = await push(event(subs.contextOf('dev-1')), headers);
      assert.equal(res.status, 401);
      assert.equal(outcomes.at(-1), 'unauthorized');
    }
    assert.deepEqual(taken, []);
    assert.ok(!logged.join('\n').includes(token), 'the token is never logged');
  });

  it('refuses a body over the bound with 413, declared or streamed', async () => {
    const big = JSON.stringify({ Context: subs.contextOf('dev-1'), pad: 'x'.repeat(10_000) });
    const declared = await push(big);
    assert.equal(declared.status, 413);
    const streamed = await fetch(`http://127.0.0.1:${listener.port}/events`, {
      method: 'POST',
      headers: { [eventTokenHeader]: token },
      body: new ReadableStream({
        start(c) {
          c.enqueue(new TextEncoder().encode(big));
          c.close();
        },
      }),
      duplex: 'half',
    } as RequestInit).catch(() => undefined);
    // The listener may close the connection before the client reads the answer; either way nothing is taken.
    if (streamed) assert.equal(streamed.status, 413);
    assert.deepEqual(taken, []);
    assert.equal(outcomes.at(-1), 'too_large');
  });

  it('answers 204 without taking an event of no device of ours, 400 a body that is no event, 405 a GET', async () => {
    assert.equal((await push(event('someone-else/dev-1'))).status, 204);
    assert.equal(outcomes.at(-1), 'unmapped');
    assert.equal((await push('not json')).status, 400);
    assert.equal(outcomes.at(-1), 'malformed');
    const get = await fetch(`http://127.0.0.1:${listener.port}/events`, { headers: { [eventTokenHeader]: token } });
    assert.equal(get.status, 405);
    assert.deepEqual(taken, []);
  });

  it('Context names the site and device; another site or prefix maps to nothing', () => {
    assert.equal(subs.contextOf('dev-9'), 'fleet-satellite/site-a/dev-9');
    assert.equal(subs.deviceOf('fleet-satellite/site-a/dev-9'), 'dev-9');
    assert.equal(subs.deviceOf('fleet-satellite/site-b/dev-9'), undefined);
    assert.equal(subs.deviceOf('fleet-satellite/site-a/'), undefined);
  });
});

describe('debouncer', () => {
  it('gives one fire per key for a burst, and fires again for a later burst', async () => {
    const fired: string[] = [];
    const d = new Debouncer(50, (k) => fired.push(k));
    for (let i = 0; i < 5; i++) d.hit('a');
    d.hit('b');
    await sleep(20);
    d.hit('a');
    assert.deepEqual(fired, []);
    await sleep(60);
    assert.deepEqual(fired.sort(), ['a', 'b']);
    d.hit('a');
    await sleep(70);
    assert.deepEqual(fired.sort(), ['a', 'a', 'b']);
  });

  it('clear drops what is pending', async () => {
    const fired: string[] = [];
    const d = new Debouncer(20, (k) => fired.push(k));
    d.hit('a');
    d.clear();
    await sleep(40);
    assert.deepEqual(fired, []);
  });
});

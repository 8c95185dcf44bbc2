import assert from 'node:assert/strict';
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { connectDb, deliveriesOfBreaches, insertDevice, insertSite, setLifecycle, type DbHandle } from '@fleet/db';
import { cloneTestDatabase, type TestDatabase } from '@fleet/db/testing';
import { createAgentMetrics } from '../src/metrics.js';
import { SlaConfig } from '../src/sla-config.js';
import { SlaWatch } from '../src/sla-watch.js';
import { sendWebhook } from '../src/webhook-sender.js';

const baseUrl = process.env['FLEET_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const template = process.env['FLEET_TEST_TEMPLATE_DB'] ?? 'fleet_template';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A receiver's check as docs/sla.md writes it: HMAC of `<timestamp>.<raw body>`, compared in constant time. */
function verify(secret: string, headers: IncomingHttpHeaders, body: string, toleranceS = 300): boolean {
  const timestamp = Number(headers['x-fleet-timestamp']);
  if (!Number.isInteger(timestamp) || Math.abs(Date.now() / 1000 - timestamp) > toleranceS) return false;
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`);
  const given = Buffer.from(String(headers['x-fleet-signature'] ?? ''));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** An HTTP receiver on loopback that answers each request with the next status of `statuses` (the last repeats). */
async function receiver(statuses: number[]): Promise<{ url: string; received: Received[]; server: Server }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const status = statuses[Math.min(received.length, statuses.length) - 1]!;
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status >= 300 ? 'receiver is down' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/fleet`, received, server };
}

describe('SLA breaches escalate to webhooks, signed and retried', () => {
  let database: TestDatabase;
  let handle: DbHandle;
  const dir = mkdtempSync(join(tmpdir(), 'fleet-sla-'));
  const secret = `s3cr3t-${randomUUID()}`;
  const secretFile = join(dir, 'ops.secret');
  const servers: Server[] = [];

  before(async () => {
    writeFileSync(secretFile, `${secret}\n`, { mode: 0o600 });
    database = await cloneTestDatabase(baseUrl, template);
    handle = connectDb(database.url, 4);
    await insertSite(handle.db, { id: 'hook-01', name: 'Hooks' });
  });
  after(async () => {
    for (const s of servers) s.close();
    await handle?.close();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a device stuck enrolling raises the metric and one delivery, retried once after the receiver fails', async () => {
    const hook = await receiver([503, 204]);
    servers.push(hook.server);
    const device = await insertDevice(handle.db, { name: 'ct07', siteId: 'hook-01' });
    const moved = await setLifecycle(handle.db, {
      deviceId: device.id,
      to: 'enrolling',
      writer: 'lifecycle-workflow',
      jobId: randomUUID(),
      reason: 'EnrolmentStarted',
    });
    await handle.pool.query(`update device_transitions set at = now() - interval '10 seconds' where id = $1`, [
      moved!.transition!.id,
    ]);
    const registry = new Registry();
    const metrics = createAgentMetrics(registry);
    const config = SlaConfig.parse({
      intervalS: 60,
      lifecycle: { enrolling: 5 },
      webhooks: [{ name: 'ops', url: hook.url, secretFile, timeoutS: 5 }],
      delivery: { retryBaseS: 0.1, retryMaxS: 0.2 },
    });
    const watch = new SlaWatch({ db: handle.db, log: pino({ level: 'silent' }), metrics, config });

    const sleepMs = await watch.run();
    assert.equal(hook.received.length, 1, 'the first attempt went out with the pass that found the breach');
    assert.ok(sleepMs <= 300, `the retry is due within its backoff, not at the next pass (${sleepMs} ms)`);
    const open = await registry.getSingleMetric('fleet_agent_sla_open_breaches')!.get();
    assert.deepEqual(
      open.values.map((v) => [v.labels, v.value]),
      [[{ object_type: 'device', sla_key: 'lifecycle:enrolling' }, 1]],
    );

    await new Promise((r) => setTimeout(r, sleepMs));
    await watch.run();
    assert.equal(hook.received.length, 2, 'retried once');
    const [first, second] = hook.received as [Received, Received];
    assert.equal(second.headers['x-fleet-delivery'], first.headers['x-fleet-delivery'], 'one delivery, two attempts');
    assert.equal(second.body, first.body, 'the same body on every attempt');
    for (const r of hook.received) {
      assert.ok(verify(secret, r.headers, r.body), 'signed with the secret over the timestamp and the raw body');
      assert.ok(!verify('another-secret-entirely', r.headers, r.body));
      assert.equal(r.headers['x-fleet-event'], 'sla.breached');
      assert.equal(r.headers['content-type'], 'application/json');
    }
    const tampered = second.body.replace('ct07', 'ct08');
    assert.ok(!verify(secret, second.headers, tampered), 'a changed body fails the check');
    const body = JSON.parse(second.body) as { delivery_id: string; event: string; breach: Record<string, unknown> };
    assert.equal(body.delivery_id, second.headers['x-fleet-delivery']);
    assert.equal(body.event, 'sla.breached');
    assert.equal(body.breach['object_id'], device.id);
    assert.equal(body.breach['object_name'], 'ct07');
    assert.equal(body.breach['sla_key'], 'lifecycle:enrolling');
    assert.equal(body.breach['limit_s'], 5);
    assert.ok((body.breach['overdue_s'] as number) >= 5);

    const [delivery] = await deliveriesOfBreaches(handle.db, [body.breach['id'] as string]);
    assert.deepEqual(
      [delivery?.status, delivery?.attempts, delivery?.lastStatus, delivery?.lastError],
      ['delivered', 2, 204, null],
    );
    const attempts = await registry.getSingleMetric('fleet_agent_webhook_attempts_total')!.get();
    assert.deepEqual(Object.fromEntries(attempts.values.map((v) => [v.labels['outcome'], v.value])), {
      retry: 1,
      delivered: 1,
    });

    // Another pass finds the breach open still: no new delivery.
    await watch.pass();
    await watch.run();
    assert.equal(hook.received.length, 2);
  });

  it('an attempt fails with a reason: no answer in time, an unreadable secret, an error status', async () => {
    const silent = createServer(() => undefined);
    servers.push(silent);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/`;
    const delivery = { id: randomUUID(), event: 'sla.breached', payload: { hello: 'world' } };

    const slow = await sendWebhook({ url, secretFile, timeoutS: 0.3 }, delivery);
    assert.deepEqual(slow, { delivered: false, error: 'no answer within 0.3 s' });

    const missing = await sendWebhook({ url, secretFile: join(dir, 'absent'), timeoutS: 1 }, delivery);
    assert.equal(missing.delivered, false);
    assert.match(missing.error!, /cannot read the secret file .*absent: ENOENT/);

    const down = await receiver([429]);
    servers.push(down.server);
    const refused = await sendWebhook({ url: down.url, secretFile, timeoutS: 1 }, delivery);
    assert.deepEqual(refused, { delivered: false, status: 429, error: 'HTTP 429: receiver is down' });
  });
});

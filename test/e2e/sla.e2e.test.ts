import assert from 'node:assert/strict';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '../harness/firmware.js';
import { Stack, expectStatus } from '../harness/stack.js';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}
interface Payload {
  delivery_id: string;
  event: string;
  breach: { id: string; object_id: string; sla_key: string; limit_s: number; resolution: string | null };
}
interface BreachBody {
  id: string;
  object_id: string;
  sla_key: string;
  resolved_at: string | null;
  resolution: string | null;
  deliveries: { id: string; event: string; status: string; attempts: number; last_status: number | null }[];
}

/** The receiver's side of docs/sla.md: the signature over `<timestamp>.<raw body>`, a timestamp within 5 minutes. */
function signedBy(secret: string, r: Received): boolean {
  const timestamp = Number(r.headers['x-fleet-timestamp']);
  if (!Number.isInteger(timestamp) || Math.abs(Date.now() / 1000 - timestamp) > 300) return false;
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(`${timestamp}.${r.body}`).digest('hex')}`);
  const given = Buffer.from(String(r.headers['x-fleet-signature'] ?? ''));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Issue 17's stuck-state SLA on the whole stack: a device enrolment whose BMC stopped answering waits for a decision,
 * the device stays `enrolling` past a 5 s SLA, and the agent raises the breach (API, metric) and escalates it to a
 * webhook that fails its first attempt.
 */
describe('an enrolment stuck past its SLA', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-sla-e2e-'));
  const secret = randomBytes(24).toString('hex');
  const secretFile = join(dir, 'ops.secret');
  const received: Received[] = [];
  let receiver: Server;
  let stack: Stack;

  before(
    async () => {
      writeFileSync(secretFile, secret, { mode: 0o600 });
      receiver = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
          // The receiver is down for the first delivery's first attempt.
          res.writeHead(received.length === 1 ? 500 : 204).end();
        });
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/fleet`;
      stack = new Stack({
        bmcs: 1,
        timeScale: 0.01,
        sla: {
          intervalS: 1,
          lifecycle: { enrolling: 5 },
          webhooks: [{ name: 'ops', url, secretFile, timeoutS: 5 }],
          delivery: { retryBaseS: 0.5, retryMaxS: 1 },
        },
      });
      await stack.start();
    },
    { timeout: 180_000 },
  );
  after(async () => {
    await stack?.stop();
    receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    'raises the breach and the metric, delivers one signed webhook retried once, and resolves when it moves on',
    { timeout: 180_000 },
    async () => {
      const deviceId = stack.deviceIds.get(stack.bmcs[0]!.id)!;
      const bmc = await fetch(`${stack.simAdminUrl}/bmcs/${stack.bmcs[0]!.id}/health/unresponsive`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ mode: 'reset' }),
      });
      assert.equal(bmc.status, 200, await bmc.text());
      const job = expectStatus(202)(await stack.api('POST', `/v1/devices/${deviceId}/enrol`, {}, stack.tokens.operator))
        .body as { id: string };

      await waitFor('the breach to reach the webhook, retried', async () => received.length >= 2, 60_000);
      const [first, second] = received as [Received, Received];
      assert.ok(signedBy(secret, first) && signedBy(secret, second), 'both attempts signed with the secret');
      assert.equal(second.headers['x-fleet-delivery'], first.headers['x-fleet-delivery'], 'one delivery');
      assert.equal(second.body, first.body);
      const payload = JSON.parse(second.body) as Payload;
      assert.equal(payload.event, 'sla.breached');
      assert.equal(payload.delivery_id, second.headers['x-fleet-delivery']);
      assert.deepEqual(
        [payload.breach.object_id, payload.breach.sla_key, payload.breach.limit_s],
        [deviceId, 'lifecycle:enrolling', 5],
      );

      const device = expectStatus(200)(
        await stack.api('GET', `/v1/devices/${deviceId}`, undefined, stack.tokens.viewer),
      ).body as { lifecycle: { state: string } };
      assert.equal(device.lifecycle.state, 'enrolling');
      const breaches = async () =>
        (
          expectStatus(200)(
            await stack.api('GET', `/v1/sla-breaches?object_id=${deviceId}`, undefined, stack.tokens.viewer),
          ).body as { items: BreachBody[] }
        ).items;
      await waitFor('the delivery recorded as delivered', async () => {
        const [b] = await breaches();
        return b?.deliveries[0]?.status === 'delivered';
      });
      const [open] = await breaches();
      assert.equal(open!.id, payload.breach.id);
      assert.equal(open!.resolved_at, null);
      assert.deepEqual(
        open!.deliveries.map((d) => [d.id, d.event, d.status, d.attempts, d.last_status]),
        [[payload.delivery_id, 'sla.breached', 'delivered', 2, 204]],
      );

      const metrics = await (await fetch(`http://127.0.0.1:${stack.metricsPort(stack.agent)}/metrics`)).text();
      assert.match(metrics, /fleet_agent_sla_open_breaches\{object_type="device",sla_key="lifecycle:enrolling"\} 1/);
      assert.match(metrics, /fleet_agent_sla_breaches_total\{object_type="device",sla_key="lifecycle:enrolling"\} 1/);
      assert.match(metrics, /fleet_agent_webhook_attempts_total\{webhook="ops",outcome="retry"\} 1/);
      assert.match(metrics, /fleet_agent_webhook_attempts_total\{webhook="ops",outcome="delivered"\} 1/);

      // A rejected device leaves `enrolling` for `failed`: the breach resolves and the webhook hears it once.
      await waitFor('the enrolment to wait for a decision', async () => {
        const j = expectStatus(200)(await stack.api('GET', `/v1/jobs/${job.id}`, undefined, stack.tokens.viewer))
          .body as { progress?: { decision?: unknown } | null };
        return Boolean(j.progress?.decision);
      });
      expectStatus(202)(
        await stack.api(
          'POST',
          `/v1/jobs/${job.id}/decision`,
          { action: 'reject', reason: 'BMC does not answer' },
          stack.tokens.operator,
        ),
      );
      await waitFor('the resolution to reach the webhook', async () => received.length >= 3, 60_000);
      const resolved = JSON.parse(received[2]!.body) as Payload;
      assert.ok(signedBy(secret, received[2]!));
      assert.equal(resolved.event, 'sla.resolved');
      assert.equal(resolved.breach.id, payload.breach.id);
      assert.equal(resolved.breach.resolution, 'cleared');
      const [closed] = await breaches();
      assert.equal(closed!.resolution, 'cleared');
      assert.equal(received.filter((r) => r.headers['x-fleet-event'] === 'sla.breached').length, 2);
    },
  );
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Connection } from '@temporalio/client';
import { encryptedEncoding } from '@fleet/temporal/codec';
import { Stack, expectStatus } from '../harness/stack.js';

interface RawPayload {
  metadata?: Record<string, Uint8Array> | null;
  data?: Uint8Array | null;
}

/**
 * Every payload of a raw history, with where it sits; search attributes are left out: Temporal indexes them, so they
 * are never encrypted (docs/security.md).
 */
function payloadsOf(value: unknown, path = '', out: { path: string; payload: RawPayload }[] = []) {
  if (!value || typeof value !== 'object' || value instanceof Uint8Array) return out;
  if ('data' in value && 'metadata' in value && (value as RawPayload).data instanceof Uint8Array) {
    out.push({ path, payload: value as RawPayload });
    return out;
  }
  for (const [k, v] of Object.entries(value)) if (k !== 'searchAttributes') payloadsOf(v, `${path}.${k}`, out);
  return out;
}

const wire = (p: RawPayload) => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
  ),
  data: Buffer.from(p.data ?? []).toString('base64'),
});

describe('Temporal payload encryption across real processes', () => {
  const stack = new Stack({ bmcs: 1, timeScale: 0.02, payloadEncryption: true });
  before(() => stack.start(), { timeout: 120_000 });
  after(() => stack.stop(), { timeout: 60_000 });

  it('a job runs with both sides sharing the ring, and Temporal holds none of its input in clear', async () => {
    const deviceId = stack.deviceIds.get('bmc-0001')!;
    const bmcUrl = stack.bmcs[0]!.url;
    const res = await stack
      .api('POST', `/v1/devices/${deviceId}/power`, { action: 'on' }, stack.tokens.operator)
      .then(expectStatus(202));
    const jobId = (res.body as { id: string }).id;
    const done = await stack.waitForJob(jobId);
    // The result comes back through the workflow's memo, which the agent decrypts to project it.
    assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
    assert.equal((done.result as { powerState?: string } | null)?.powerState, 'On');

    // A client without the codec sees what the Temporal server stores.
    const connection = await Connection.connect({ address: stack.temporal.address });
    let payloads: { path: string; payload: RawPayload }[];
    try {
      const { history } = await connection.workflowService.getWorkflowExecutionHistory({
        namespace: 'default',
        execution: { workflowId: jobId },
      });
      payloads = payloadsOf(history);
    } finally {
      await connection.close();
    }
    // Input, activity inputs and results, memo upserts, the workflow's result.
    assert.ok(payloads.length >= 4, `only ${payloads.length} payloads in the history`);
    const input = payloads.find((p) => p.path.includes('workflowExecutionStartedEventAttributes.input'));
    assert.ok(input, 'the workflow input is in the history');
    for (const { path, payload } of payloads) {
      assert.equal(Buffer.from(payload.metadata?.['encoding'] ?? []).toString(), encryptedEncoding, path);
      const bytes = Buffer.from(payload.data!);
      for (const secret of [deviceId, bmcUrl, new URL(bmcUrl).host, 'bmc/default'])
        assert.ok(!bytes.includes(secret), `${secret} in clear at ${path}`);
    }

    // The hub's codec endpoint gives the input back to an admin, and to no one else.
    const body = { payloads: [wire(input.payload)] };
    const decoded = await stack
      .api('POST', '/v1/temporal-codec/decode', body, stack.tokens.admin)
      .then(expectStatus(200));
    const [plain] = (decoded.body as { payloads: { metadata: Record<string, string>; data: string }[] }).payloads;
    assert.equal(Buffer.from(plain!.metadata['encoding']!, 'base64').toString(), 'json/plain');
    const text = Buffer.from(plain!.data, 'base64').toString();
    for (const value of [deviceId, bmcUrl, 'bmc/default']) assert.ok(text.includes(value), `${value} not in ${text}`);
    await stack.api('POST', '/v1/temporal-codec/decode', body, stack.tokens.viewer).then(expectStatus(403));
    const [key] = Object.values((JSON.parse(stack.keyRing!.document) as { keys: Record<string, string> }).keys);
    for (const p of [stack.hub, stack.agent, stack.satellite])
      assert.ok(!p.output.includes(key!), `key material in ${p.name} log`);
  });
});

import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { PayloadDecryptionError, type EncryptionCodec } from '@fleet/temporal/codec';
import { ApiError, invalid } from '../errors.js';
import { bulkBodyLimit, defineRoute, type ApiDoc } from '../route.js';

const base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64');

/** Temporal's codec-server shape: metadata values and data are base64. */
const Payloads = z.object({
  payloads: z
    .array(z.object({ metadata: z.record(z.string(), base64).optional(), data: base64.optional() }))
    .max(10_000),
});
const PayloadsOut = z
  .object({ payloads: z.array(z.object({ metadata: z.record(z.string(), z.string()), data: z.string() })) })
  .meta({ id: 'TemporalPayloads' });

type Wire = z.infer<typeof PayloadsOut>['payloads'][number];
type Payload = Parameters<EncryptionCodec['encode']>[0][number];

const fromWire = (p: z.infer<typeof Payloads>['payloads'][number]): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: Buffer.from(p.data ?? '', 'base64'),
});
const toWire = (p: Payload): Wire => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? []).toString('base64')]),
  ),
  data: Buffer.from(p.data ?? []).toString('base64'),
});

/**
 * The codec server the Temporal UI (or `temporal --codec-endpoint`) calls to show encrypted payloads
 * (docs/security.md, "Temporal payload encryption"): admins only, since a decoded payload is a job's whole input.
 * Without a key ring in the hub's config it refuses (FAILED_PRECONDITION). Pure crypto: no Temporal call.
 */
export function temporalCodecRoutes(
  app: FastifyInstance,
  doc: ApiDoc,
  codec: EncryptionCodec | undefined,
  uiOrigins: readonly string[],
): void {
  allowTemporalUi(app, uiOrigins);
  const route = (op: 'decode' | 'encode', summary: string) =>
    defineRoute(
      app,
      doc,
      {
        method: 'POST',
        url: `/v1/temporal-codec/${op}`,
        tag: 'temporal',
        summary,
        // No `sites`: a token limited to some sites is refused, as payloads of any site may be sent.
        role: 'admin',
        body: Payloads,
        bodyLimit: bulkBodyLimit,
        success: { status: 200, description: `The payloads, ${op}d, in the same order`, body: PayloadsOut },
        errors: [409],
      },
      async ({ body }) => {
        if (!codec)
          throw new ApiError('FAILED_PRECONDITION', 'this hub has no Temporal key ring (temporalPayloadEncryption)');
        const payloads = body.payloads.map(fromWire);
        if (op === 'encode') {
          if (!codec.encrypts)
            throw new ApiError(
              'FAILED_PRECONDITION',
              'payload key rings are per site (temporalPayloadEncryption.keyRingDir): this endpoint only decodes',
            );
          return { payloads: (await codec.encode(payloads)).map(toWire) };
        }
        // One at a time, so a refusal names the payload.
        const decoded: Wire[] = [];
        for (const [i, payload] of payloads.entries()) {
          try {
            decoded.push(toWire((await codec.decode([payload]))[0]!));
          } catch (err) {
            if (err instanceof PayloadDecryptionError) throw invalid(`body.payloads.${i}`, err.message);
            throw err;
          }
        }
        return { payloads: decoded };
      },
    );
  route('decode', "Decrypts Temporal payloads for the Temporal UI's codec server setting (admin)");
  route('encode', 'Encrypts Temporal payloads with the active key, as the workflow agent does (admin)');
}

const codecPath = /^\/v1\/temporal-codec\/(decode|encode)(\?|$)/;

/**
 * CORS for the Temporal UI: its pages call the codec endpoint from their own origin with the signed-in person's token
 * (the UI's `passAccessToken`), which a browser sends only after a preflight this answers. Listed origins only; any
 * other gets no CORS headers, so its page cannot read the answer. The preflight carries no token and reveals nothing.
 */
function allowTemporalUi(app: FastifyInstance, origins: readonly string[]): void {
  if (origins.length === 0) return;
  const allowed = (origin: string | undefined) => (origin && origins.includes(origin) ? origin : undefined);
  app.options('/v1/temporal-codec/:op', async (request, reply) => {
    const origin = allowed(request.headers.origin);
    if (!origin || !codecPath.test(request.url)) return reply.code(404).send();
    return reply
      .code(204)
      .headers({
        'access-control-allow-origin': origin,
        'access-control-allow-methods': 'POST',
        'access-control-allow-headers': 'authorization, content-type, x-namespace',
        'access-control-max-age': '600',
        vary: 'origin',
      })
      .send();
  });
  app.addHook('onSend', async (request, reply) => {
    const origin = allowed(request.headers.origin);
    if (origin && codecPath.test(request.url))
      void reply.headers({ 'access-control-allow-origin': origin, vary: 'origin' });
  });
}

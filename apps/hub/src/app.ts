import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { Histogram, type Registry } from 'prom-client';
import type { Db } from '@fleet/db';
import type { EncryptionCodec } from '@fleet/temporal/codec';
import { EventFeed, type FeedTimings } from './events/feed.js';
import { AccessLog } from './access-log.js';
import { registerAudit } from './plugins/audit.js';
import { registerAuth } from './plugins/auth.js';
import { registerRateLimit, type RateLimitOptions } from './plugins/rate-limit.js';
import { registerSecurityHeaders } from './plugins/security-headers.js';
import { registerDocs } from './plugins/docs.js';
import { registerSiteScope } from './plugins/site-scope.js';
import { registerWeb, type WebOptions } from './plugins/web.js';
import { clientErrorHandler, frameworkErrors, registerErrorHandling, serializeError } from './plugins/errors.js';
import { approvalRoutes } from './routes/approvals.routes.js';
import { auditRoutes } from './routes/audit.routes.js';
import { campaignRoutes } from './routes/campaigns.routes.js';
import { catalogRoutes } from './routes/catalog.routes.js';
import { deviceFirmwareRoutes } from './routes/device-firmware.routes.js';
import { deviceHistoryRoutes } from './routes/device-history.routes.js';
import { enrolmentRoutes } from './routes/enrolment.routes.js';
import { healthRoutes } from './routes/health.routes.js';
import { facilityRoutes } from './routes/facility.routes.js';
import { remediationRoutes } from './routes/remediation.routes.js';
import { rmaRoutes } from './routes/rma.routes.js';
import { slaRoutes } from './routes/sla.routes.js';
import { hardwareDocumentRoutes } from './routes/hardware-documents.routes.js';
import { deviceRoutes } from './routes/devices.routes.js';
import { eventRoutes } from './routes/events.routes.js';
import { firmwareComplianceRoutes } from './routes/firmware-compliance.routes.js';
import { firmwareManifestRoutes } from './routes/firmware-manifests.routes.js';
import { firmwarePackageRoutes, type FirmwareDeps } from './routes/firmware-packages.routes.js';
import { issueRoutes } from './routes/issues.routes.js';
import { jobRoutes } from './routes/jobs.routes.js';
import { powerRoutes } from './routes/power.routes.js';
import { rackRoutes } from './routes/racks.routes.js';
import { signInRoutes } from './routes/sign-in.routes.js';
import { siteRoutes } from './routes/sites.routes.js';
import { switchRoutes } from './routes/switch.routes.js';
import { bmcCredentialRoutes } from './routes/bmc-credentials.routes.js';
import { tokenRoutes } from './routes/tokens.routes.js';
import { temporalCodecRoutes } from './routes/temporal-codec.routes.js';
import { HubConfig } from './config.js';
import { FacilityFollower } from './services/facility-follower.js';
import { RetentionReaper } from './services/retention-reaper.js';
import { ApiDoc } from './route.js';
import type { ViewContext } from './views.js';

export interface HubDeps {
  db: Db;
  log: Logger;
  registry: Registry;
  views: ViewContext;
  /** Campaign settings; the config's defaults when absent. */
  campaigns?: HubConfig['campaigns'];
  /** Quarantine rules, blast radius and playbooks; the config's defaults when absent. */
  remediation?: HubConfig['remediation'];
  /** The firmware catalog's blob store and upload limit; without it the hub serves no firmware routes. */
  firmware?: FirmwareDeps;
  /** The web console's folder, served at `/` behind the API; without it the hub serves the API only. */
  web?: WebOptions;
  /** Heartbeat and pruning of the live-update feed; defaults when absent (tests shorten them). */
  events?: Partial<FeedTimings>;
  /** Requests per token (else per address); no limit when absent. */
  rateLimit?: RateLimitOptions;
  /** Serve HTTPS with this certificate chain and key (PEM); plain HTTP without. */
  https?: { cert: string; key: string };
  /** Two-person rules; the config's defaults (all on) when absent. */
  twoPerson?: HubConfig['twoPerson'];
  /** The retention reaper's ages and pace; the config's defaults when absent. */
  retention?: HubConfig['retention'];
  /** OIDC sign-in beside API tokens; API tokens only when absent. */
  oidc?: HubConfig['oidc'];
  /** The Temporal payload key ring, for the codec endpoint; without it that endpoint refuses. */
  temporalCodec?: EncryptionCodec;
  /** Temporal UI origins whose pages may call the codec endpoint (CORS); none when absent. */
  temporalCodecOrigins?: string[];
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The route table's document, with each success's zod schema (tests hold real answers to them). */
    apiDoc: ApiDoc;
  }
}

const requestIdPattern = /^[A-Za-z0-9._-]{1,128}$/;

/** The hub API. It reads and writes Postgres only: no Temporal, device or NetBox calls. */
export function buildHub(deps: HubDeps): FastifyInstance {
  const app = Fastify({
    // Errors are logged whole, less the parameter values of a failed statement.
    loggerInstance: deps.log.child({}, { serializers: { err: serializeError } }) as FastifyBaseLogger,
    clientErrorHandler,
    frameworkErrors,
    // Keep a caller's request id (for correlation across services), else make one.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && requestIdPattern.test(given) ? given : randomUUID();
    },
    bodyLimit: 1 << 20,
    logController: new AccessLog(),
    ...(deps.https ? { https: { ...deps.https, minVersion: 'TLSv1.2' as const } } : {}),
  }) as unknown as FastifyInstance;
  const duration = new Histogram({
    name: 'fleet_hub_http_request_duration_seconds',
    help: 'Hub API request duration',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [deps.registry],
  });
  app.addHook('onSend', async (request, reply) => {
    void reply.header('x-request-id', String(request.id));
  });
  app.addHook('onResponse', async (request, reply) => {
    duration.observe(
      { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });
  registerErrorHandling(app);
  // Bodies are JSON (the firmware upload adds its raw bytes); any other type is a 415 naming the one to send.
  app.removeContentTypeParser('text/plain');
  registerSecurityHeaders(app, Boolean(deps.https), deps.oidc?.webClientId ? deps.oidc.issuer : undefined);
  if (deps.rateLimit) registerRateLimit(app, deps.rateLimit);
  const tokenAuth = registerAuth(app, deps.db, undefined, deps.oidc);
  registerSiteScope(app, deps.db);
  registerAudit(app, deps.db);
  app.get('/healthz', async () => ({ status: 'ok' }));
  const doc = new ApiDoc();
  siteRoutes(app, doc, deps.db);
  rackRoutes(app, doc, deps.db);
  deviceRoutes(app, doc, deps.db, deps.views);
  deviceHistoryRoutes(app, doc, deps.db);
  enrolmentRoutes(app, doc, deps.db, deps.views);
  const remediation = deps.remediation ?? HubConfig.shape.remediation.parse(undefined);
  healthRoutes(app, doc, deps.db, remediation);
  const twoPerson = deps.twoPerson ?? HubConfig.shape.twoPerson.parse(undefined);
  remediationRoutes(app, doc, deps.db, deps.views, remediation, twoPerson);
  rmaRoutes(app, doc, deps.db, deps.views);
  facilityRoutes(app, doc, deps.db, remediation);
  // Moves facility events on once their power-off jobs end (docs/day2.md).
  const facility = new FacilityFollower(deps.db, remediation, app.log);
  app.addHook('onReady', async () => facility.start());
  app.addHook('preClose', () => facility.close());
  issueRoutes(app, doc, deps.db);
  jobRoutes(app, doc, deps.db, deps.views);
  powerRoutes(app, doc, deps.db, deps.views, twoPerson);
  if (deps.firmware) {
    firmwarePackageRoutes(app, doc, deps.db, deps.firmware);
    hardwareDocumentRoutes(app, doc, deps.db, deps.firmware.blobs);
    firmwareManifestRoutes(app, doc, deps.db);
    firmwareComplianceRoutes(app, doc, deps.db);
  }
  campaignRoutes(
    app,
    doc,
    deps.db,
    deps.views,
    deps.campaigns ?? HubConfig.shape.campaigns.parse(undefined),
    twoPerson,
  );
  deviceFirmwareRoutes(app, doc, deps.db, deps.views);
  switchRoutes(app, doc, deps.db, deps.views, twoPerson);
  bmcCredentialRoutes(app, doc, deps.db, deps.views);
  approvalRoutes(app, doc, deps.db, deps.views);
  catalogRoutes(app, doc);
  signInRoutes(app, doc, deps.oidc);
  auditRoutes(app, doc, deps.db);
  tokenRoutes(app, doc, deps.db, tokenAuth);
  slaRoutes(app, doc, deps.db);
  temporalCodecRoutes(app, doc, deps.temporalCodec, deps.temporalCodecOrigins ?? []);
  // Old finished jobs and idempotency keys go; one hub process at a time (docs/security.md, "Retention").
  const reaper = new RetentionReaper(deps.db, deps.retention ?? HubConfig.shape.retention.parse(undefined), app.log);
  app.addHook('onReady', async () => reaper.start());
  app.addHook('preClose', () => reaper.close());
  const feed = new EventFeed(deps.db, app.log, deps.events);
  eventRoutes(app, doc, deps.db, feed);
  // Before the server stops waiting for open connections: an event stream never ends on its own.
  app.addHook('preClose', () => feed.close());
  const openapi = doc.document();
  app.get('/openapi.json', async () => openapi);
  registerDocs(app, openapi);
  // Last: it answers only what no route above matched.
  if (deps.web) registerWeb(app, deps.web);
  app.decorate('apiDoc', doc);
  return app;
}

import swagger, { type StaticDocumentSpec } from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

/**
 * The OpenAPI document as an interactive page at /docs (public, like /openapi.json). The document is the route
 * table's own (static mode: nothing is derived from Fastify's schemas), and the page's assets are served from the
 * package, so it works without internet access.
 */
export function registerDocs(app: FastifyInstance, document: unknown): void {
  void app.register(swagger, {
    mode: 'static',
    // Served as it is: OpenAPI 3.1, which the plugin's types (2.0, 3.0) do not name.
    specification: { document: document as StaticDocumentSpec['document'] },
  });
  void app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { validatorUrl: null } });
}

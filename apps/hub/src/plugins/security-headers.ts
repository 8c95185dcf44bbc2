import helmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';

/**
 * Security headers on every answer (helmet): the console's scripts, styles and API calls come from the hub's own
 * origin only, no page may frame it, no referrer leaves it, and responses are never sniffed as another type. HSTS
 * and upgrade-insecure-requests only over HTTPS: on a plain-HTTP dev stack they would send the browser to a port
 * that does not speak TLS. `signInIssuer`, the OIDC issuer the console signs people in with, is the one other origin
 * its scripts may call: its discovery document and token endpoint (docs/security.md "OIDC sign-in").
 */
export function registerSecurityHeaders(app: FastifyInstance, https: boolean, signInIssuer?: string): void {
  void app.register(helmet, {
    global: true,
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        scriptSrcAttr: ["'none'"],
        // Swagger UI (/docs) and React set inline style attributes.
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:'],
        fontSrc: ["'self'", 'data:'],
        connectSrc: ["'self'", ...(signInIssuer ? [new URL(signInIssuer).origin] : [])],
        objectSrc: ["'none'"],
        baseUri: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        ...(https ? { upgradeInsecureRequests: [] } : {}),
      },
    },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
    strictTransportSecurity: https ? { maxAge: 31_536_000, includeSubDomains: true } : false,
    // The console and its API share one origin; nothing is meant to be embedded elsewhere.
    crossOriginResourcePolicy: { policy: 'same-origin' },
  });
}

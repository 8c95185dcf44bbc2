import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { OidcConfig } from '../config.js';
import { defineRoute, type ApiDoc } from '../route.js';

const SignInOptions = z
  .object({
    oidc: z
      .object({
        issuer: z.string().describe('The OpenID provider; its discovery document is <issuer>/.well-known/…'),
        client_id: z.string().describe("The console's public client at the issuer (no secret; PKCE)"),
        scopes: z.array(z.string()),
        resource: z
          .string()
          .nullable()
          .describe('The resource indicator (RFC 8707) to ask the token for; null: send none'),
      })
      .nullable()
      .describe('null: sign in with an API token only'),
  })
  .meta({ id: 'SignInOptions' });

/** What a browser needs to sign a person in through the OIDC provider (docs/security.md "OIDC sign-in"). */
function signInOptions(oidc: OidcConfig | undefined): z.infer<typeof SignInOptions> {
  if (!oidc?.webClientId) return { oidc: null };
  return {
    oidc: {
      issuer: oidc.issuer,
      client_id: oidc.webClientId,
      scopes: oidc.webScopes,
      resource: oidc.webResourceIndicator ? oidc.audience : null,
    },
  };
}

/** How the console signs people in: public, as the sign-in page is shown before anyone has a token. */
export function signInRoutes(app: FastifyInstance, doc: ApiDoc, oidc: OidcConfig | undefined): void {
  const options = signInOptions(oidc);
  defineRoute(
    app,
    doc,
    {
      method: 'GET',
      url: '/v1/auth/config',
      tag: 'security',
      summary:
        'How a browser may sign in (no token needed): beside API tokens, the OIDC issuer and public client for an ' +
        'authorization code sign-in with PKCE, when the hub has one',
      success: { status: 200, description: 'The sign-in options', body: SignInOptions },
    },
    async () => options,
  );
}

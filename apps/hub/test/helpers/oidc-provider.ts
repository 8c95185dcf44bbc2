import { exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import Provider from 'oidc-provider';

// An OpenID provider in this process (npm oidc-provider), issuing JWT access tokens by client credentials: each client
// stands for a person (`sub` and `preferred_username` are the client id), its groups put in the token. Used by the
// OIDC tests and `pnpm bench security`.

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

export async function signingKey(kid: string): Promise<SigningKey> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { kid, privateKey, jwk: { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' } };
}

/** A provider issuing JWT access tokens for `audience` to `people` (client id → groups); it signs with `keys[0]`. */
export function openIdProvider(
  issuer: string,
  keys: SigningKey[],
  people: Record<string, string[]>,
  audience: string,
): Provider {
  return new Provider(issuer, {
    clients: Object.keys(people).map((id) => ({
      client_id: id,
      client_secret: `${id}-secret`,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_post',
    })),
    jwks: { keys: keys.map((k) => k.jwk) },
    ttl: { ClientCredentials: 600 },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => audience,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => ({
          audience: resource,
          scope: 'api',
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    extraTokenClaims: (_ctx, token) => {
      const id = (token as { clientId?: string }).clientId ?? '';
      return { groups: people[id] ?? [], preferred_username: id };
    },
  });
}

/** An access token for `person` (client credentials), or the provider's error as thrown text. */
export async function clientCredentialsToken(issuer: string, person: string, resource: string): Promise<string> {
  const res = await fetch(`${issuer}/token`, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: person,
      client_secret: `${person}-secret`,
      scope: 'api',
      resource,
    }),
  });
  const body = (await res.json()) as { access_token?: string };
  if (res.status !== 200 || !body.access_token)
    throw new Error(`token for ${person}: ${res.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

import { exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import Provider, { type ClientMetadata } from 'oidc-provider';

// An OpenID provider in this process (npm oidc-provider), issuing JWT access tokens by client credentials: each client
// stands for a person (`sub` and `preferred_username` are the client id), its groups put in the token. Used by the
// OIDC tests and `pnpm bench security`. With `console`, people also sign in to the web console as themselves
// (authorization code with PKCE, a public client) on the provider's development login and consent pages, which take
// any password.

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

export async function signingKey(kid: string): Promise<SigningKey> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { kid, privateKey, jwk: { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' } };
}

/** The web console's registration at the provider. */
export interface ConsoleClient {
  clientId: string;
  redirectUri: string;
  /** Seconds a person's access tokens live (600 when absent). */
  accessTokenTtlS?: Record<string, number>;
}

/** A provider issuing JWT access tokens for `audience` to `people` (client id → groups); it signs with `keys[0]`. */
export function openIdProvider(
  issuer: string,
  keys: SigningKey[],
  people: Record<string, string[]>,
  audience: string,
  console?: ConsoleClient,
): Provider {
  const clients: ClientMetadata[] = [
    ...Object.keys(people).map((id): ClientMetadata => ({
      client_id: id,
      client_secret: `${id}-secret`,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_post',
    })),
  ];
  if (console)
    clients.push({
      client_id: console.clientId,
      grant_types: ['authorization_code'],
      redirect_uris: [console.redirectUri],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
  return new Provider(issuer, {
    clients,
    jwks: { keys: keys.map((k) => k.jwk) },
    ttl: {
      ClientCredentials: 600,
      AccessToken: (_ctx, token) => console?.accessTokenTtlS?.[token.accountId ?? ''] ?? 600,
    },
    // The login page takes any name: only `people` have an account.
    findAccount: (_ctx, id) =>
      Object.hasOwn(people, id) ? { accountId: id, claims: () => ({ sub: id, preferred_username: id }) } : undefined,
    features: {
      devInteractions: { enabled: Boolean(console) },
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
      // A person signed in to the console, else a client standing for one.
      const { accountId, clientId } = token as { accountId?: string; clientId?: string };
      const id = accountId ?? clientId ?? '';
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

import * as oauth from 'oauth4webapi';
import type { components } from '@fleet/client';

// Sign-in at the hub's OpenID provider: authorization code with PKCE (S256), state and nonce, as a public client
// (docs/security.md "OIDC sign-in"). oauth4webapi does the protocol checks; this module keeps what the redirect
// needs across it.

export type OidcOptions = NonNullable<components['schemas']['SignInOptions']['oidc']>;

/** Where the provider sends the browser back; the hub answers it with the console, as every console path. */
export const callbackPath = '/auth/callback';
const redirectUri = () => `${window.location.origin}${callbackPath}`;

/** What the callback needs from the start of a sign-in: this tab's session storage, read once. */
const pendingKey = 'fleet.oidc.pending';
interface Pending {
  options: OidcOptions;
  verifier: string;
  state: string;
  nonce: string;
  returnTo: string;
}

export interface OidcToken {
  accessToken: string;
  /** Epoch milliseconds; null when the provider does not say (the hub's 401 then ends the session). */
  expiresAt: number | null;
  /** The console path the sign-in started from. */
  returnTo: string;
}

const loopbackHosts = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Plain HTTP only to an issuer on this machine (a dev stack, the tests): oauth4webapi refuses it otherwise. */
function transport(issuer: URL) {
  return { [oauth.allowInsecureRequests]: issuer.protocol === 'http:' && loopbackHosts.has(issuer.hostname) };
}

async function discover(options: OidcOptions): Promise<oauth.AuthorizationServer & { token_endpoint: string }> {
  const issuer = new URL(options.issuer);
  const as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...transport(issuer) }),
  );
  const { authorization_endpoint: authorize, token_endpoint: token } = as;
  if (!authorize || !token) throw new Error(`${options.issuer} lists no authorization or token endpoint`);
  // The hub's Content-Security-Policy lets the console call the issuer's origin and no other.
  if (new URL(token).origin !== issuer.origin)
    throw new Error(
      `the token endpoint ${token} is not on the issuer's origin ${issuer.origin}, the one the hub allows`,
    );
  return { ...as, token_endpoint: token };
}

/** A path of this console to come back to (never another origin, never the callback itself). */
function consolePath(path: string): string {
  return path.startsWith('/') && !path.startsWith('//') && !path.startsWith(callbackPath) ? path : '/';
}

/** Sends the browser to the provider's sign-in; the provider sends it back to `callbackPath`. */
export async function startSignIn(options: OidcOptions, returnTo: string): Promise<void> {
  const as = await discover(options);
  const pending: Pending = {
    options,
    verifier: oauth.generateRandomCodeVerifier(),
    state: oauth.generateRandomState(),
    nonce: oauth.generateRandomNonce(),
    returnTo: consolePath(returnTo),
  };
  const url = new URL(as.authorization_endpoint!);
  url.search = new URLSearchParams({
    client_id: options.client_id,
    redirect_uri: redirectUri(),
    response_type: 'code',
    scope: options.scopes.join(' '),
    state: pending.state,
    nonce: pending.nonce,
    code_challenge: await oauth.calculatePKCECodeChallenge(pending.verifier),
    code_challenge_method: 'S256',
    ...(options.resource ? { resource: options.resource } : {}),
  }).toString();
  sessionStorage.setItem(pendingKey, JSON.stringify(pending));
  window.location.assign(url.href);
}

/** Checks the provider's answer at `callbackUrl` against the pending sign-in and exchanges its code for a token. */
export async function finishSignIn(callbackUrl: URL): Promise<OidcToken> {
  const raw = sessionStorage.getItem(pendingKey);
  sessionStorage.removeItem(pendingKey);
  if (!raw) throw new Error('no sign-in was started in this tab, or it has been used already: sign in again');
  const pending = JSON.parse(raw) as Pending;
  const { options } = pending;
  try {
    const as = await discover(options);
    const client: oauth.Client = { client_id: options.client_id };
    const params = oauth.validateAuthResponse(as, client, callbackUrl, pending.state);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.None(),
      params,
      redirectUri(),
      pending.verifier,
      {
        ...(options.resource ? { additionalParameters: { resource: options.resource } } : {}),
        ...transport(new URL(options.issuer)),
      },
    );
    const result = await oauth.processAuthorizationCodeResponse(as, client, response, {
      expectedNonce: pending.nonce,
      requireIdToken: true,
    });
    if (result.token_type !== 'bearer') throw new Error(`the access token is of type ${result.token_type}, not bearer`);
    return {
      accessToken: result.access_token,
      expiresAt: result.expires_in === undefined ? null : Date.now() + result.expires_in * 1000,
      returnTo: pending.returnTo,
    };
  } catch (err) {
    throw new Error(`${options.issuer}: ${reason(err)}`, { cause: err });
  }
}

/** The provider's own words for a refusal, else what went wrong on the way. */
function reason(err: unknown): string {
  if (err instanceof oauth.AuthorizationResponseError || err instanceof oauth.ResponseBodyError)
    return `refused the sign-in: ${err.error}${err.error_description ? ` (${err.error_description})` : ''}`;
  // fetch rejects with a TypeError when the issuer is unreachable or its CORS or the hub's CSP forbids the call.
  if (err instanceof TypeError) return `could not be reached (${err.message})`;
  return err instanceof Error ? err.message : String(err);
}

import { useId, useState, type FormEvent } from 'react';
import { useQuery } from '@tanstack/react-query';
import { createFleetClient, unwrap } from '@fleet/client';
import { startSignIn, type OidcOptions } from './api/oidc';
import { signIn, takeSignOutReason } from './api/session';
import { ErrorView } from './components/Status';

const hub = () => createFleetClient({ baseUrl: window.location.origin });

/** The hub's sign-in options: public, the same for every token, so kept when the signed-in token changes. */
export const signInOptionsKey = ['sign-in-options'] as const;

/**
 * Signs a person in through the hub's OpenID provider when the hub has one, or with an API token checked against
 * the hub before it is kept (session storage only).
 */
export function SignIn() {
  const [reason] = useState(takeSignOutReason);
  // Asked without a token; while it is on its way (or if it fails) the token form still works.
  const options = useQuery({
    queryKey: signInOptionsKey,
    queryFn: async () => (await unwrap(hub().GET('/v1/auth/config'))).oidc,
    staleTime: Infinity,
  });
  const oidc = options.data;
  return (
    <main id="main" className="signin">
      <h1>Fleet</h1>
      {reason && <p role="alert">{reason}</p>}
      {oidc && <ProviderSignIn options={oidc} />}
      <TokenSignIn title={oidc ? 'Or with an API token' : 'Sign in'} />
    </main>
  );
}

function ProviderSignIn({ options }: { options: OidcOptions }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const provider = new URL(options.issuer).host;
  const start = async () => {
    setBusy(true);
    setError(null);
    try {
      await startSignIn(options, window.location.pathname + window.location.search);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };
  return (
    <section className="signin-provider" aria-label="Single sign-on">
      <button type="button" className="primary" disabled={busy} onClick={() => void start()}>
        {busy ? `Going to ${provider}…` : `Sign in with ${provider}`}
      </button>
      <ErrorView error={error} title="Sign-in failed" />
    </section>
  );
}

function TokenSignIn({ title }: { title: string }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const tokenId = useId();
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const token = String(new FormData(e.currentTarget).get('token') ?? '').trim();
    if (!token) return setError(new Error('Enter an API token'));
    setBusy(true);
    setError(null);
    try {
      await unwrap(createFleetClient({ baseUrl: window.location.origin, token }).GET('/v1/sites'));
      signIn(token);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={(e) => void submit(e)} method="post" action="#">
      <h2>{title}</h2>
      <p>
        <label htmlFor={tokenId}>API token</label>
        <input id={tokenId} name="token" type="password" autoComplete="off" required />
      </p>
      <p className="muted">
        The token stays in this tab&apos;s session storage and is sent only to this hub. Ask an admin for one (
        <code>admin-cli create-token</code>).
      </p>
      <ErrorView error={error} title="Sign-in failed" />
      <button type="submit" className="primary" disabled={busy}>
        {busy ? 'Checking token…' : 'Sign in'}
      </button>
    </form>
  );
}

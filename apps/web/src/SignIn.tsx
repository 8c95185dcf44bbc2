import { useId, useState, type FormEvent } from 'react';
import { createFleetClient, unwrap } from '@fleet/client';
import { signIn, takeSignOutReason } from './api/session';
import { ErrorView } from './components/Status';

/** Asks for an API token and checks it against the hub before keeping it (session storage only). */
export function SignIn() {
  const [reason] = useState(takeSignOutReason);
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
    <main id="main" className="signin">
      <h1>Fleet</h1>
      <form onSubmit={(e) => void submit(e)} method="post" action="#">
        <h2>Sign in</h2>
        {reason && <p role="alert">{reason}</p>}
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
    </main>
  );
}

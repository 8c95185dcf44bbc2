import { useEffect, useState } from 'react';
import { finishSignIn, type OidcToken } from './api/oidc';
import { signIn } from './api/session';
import { ErrorView } from './components/Status';

/** One exchange per page load: a code is good once, and React may run an effect twice. */
let exchange: Promise<OidcToken> | undefined;

/** Where the provider sends the browser back: exchanges the code, keeps the token, and opens the console. */
export function OidcCallback() {
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    exchange ??= finishSignIn(new URL(window.location.href));
    exchange.then(
      (token) => {
        signIn(token.accessToken, token.expiresAt);
        // A new page load: the code leaves the address bar and history, and the router starts at the path.
        window.location.replace(token.returnTo);
      },
      (err: unknown) => setError(err),
    );
  }, []);
  return (
    <main id="main" className="signin">
      <h1>Fleet</h1>
      {error ? (
        <>
          <ErrorView error={error} title="Sign-in failed" />
          <p>
            <a href="/">Back to sign-in</a>
          </p>
        </>
      ) : (
        <p role="status">Signing in…</p>
      )}
    </main>
  );
}

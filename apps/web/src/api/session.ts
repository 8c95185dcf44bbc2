import { useEffect, useSyncExternalStore } from 'react';

// The bearer (an API token, or the OIDC provider's access token) lives in session storage only (gone when the tab
// closes) and never in a URL.
const key = 'fleet.token';
const expiryKey = 'fleet.token.expires_at';
const listeners = new Set<() => void>();

export function currentToken(): string | null {
  return sessionStorage.getItem(key);
}

/** Keeps `token`; `expiresAt` (epoch ms) ends the session then, without waiting for the hub to refuse it. */
export function signIn(token: string, expiresAt: number | null = null): void {
  sessionStorage.setItem(key, token);
  if (expiresAt === null) sessionStorage.removeItem(expiryKey);
  else sessionStorage.setItem(expiryKey, String(expiresAt));
  listeners.forEach((l) => l());
}

/** Forgets the token; `reason` is shown on the sign-in form (e.g. the hub refused the token). */
export function signOut(reason?: string): void {
  sessionStorage.removeItem(key);
  sessionStorage.removeItem(expiryKey);
  signOutReason = reason ?? null;
  listeners.forEach((l) => l());
}

let signOutReason: string | null = null;

export function takeSignOutReason(): string | null {
  const reason = signOutReason;
  signOutReason = null;
  return reason;
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function useToken(): string | null {
  return useSyncExternalStore(subscribe, currentToken);
}

/** setTimeout's longest delay (about 24.8 days); a token living longer is checked again then. */
const MAX_DELAY_MS = 2 ** 31 - 1;

/** Signs out when the kept token expires (an OIDC access token lives minutes), back to the sign-in form. */
export function useSignOutAtExpiry(token: string | null): void {
  useEffect(() => {
    const expiresAt = Number(sessionStorage.getItem(expiryKey) ?? NaN);
    if (!token || Number.isNaN(expiresAt)) return;
    let timer: ReturnType<typeof setTimeout>;
    const check = () => {
      const left = expiresAt - Date.now();
      if (left <= 0) signOut('Your sign-in has expired: sign in again');
      else timer = setTimeout(check, Math.min(left, MAX_DELAY_MS));
    };
    check();
    return () => clearTimeout(timer);
  }, [token]);
}

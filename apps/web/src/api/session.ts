import { useSyncExternalStore } from 'react';

// The API token lives in session storage only (gone when the tab closes) and never in a URL.
const key = 'fleet.token';
const listeners = new Set<() => void>();

export function currentToken(): string | null {
  return sessionStorage.getItem(key);
}

export function signIn(token: string): void {
  sessionStorage.setItem(key, token);
  listeners.forEach((l) => l());
}

/** Forgets the token; `reason` is shown on the sign-in form (e.g. the hub refused the token). */
export function signOut(reason?: string): void {
  sessionStorage.removeItem(key);
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

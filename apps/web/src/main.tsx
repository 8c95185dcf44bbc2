import { StrictMode, useEffect } from 'react';
import { createRoot } from 'react-dom/client';
import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { RouterProvider } from '@tanstack/react-router';
import { ApiError } from '@fleet/client';
import { LiveContext, useLiveEvents } from './api/live';
import { callbackPath } from './api/oidc';
import { signOut, useSignOutAtExpiry, useToken } from './api/session';
import { OidcCallback } from './OidcCallback';
import { router } from './routes';
import { SignIn, signInOptionsKey } from './SignIn';
import './styles.css';

/** A revoked or unknown token ends the session; the sign-in form says why. */
function onError(error: unknown) {
  if (error instanceof ApiError && error.status === 401) signOut(`The hub refused the token: ${error.message}`);
}

const queryClient = new QueryClient({
  queryCache: new QueryCache({ onError }),
  mutationCache: new MutationCache({ onError }),
  defaultOptions: {
    queries: {
      staleTime: 1000,
      // A 4xx will answer the same again; network trouble and 5xx may not.
      retry: (count, error) => !(error instanceof ApiError && error.status < 500) && count < 2,
    },
  },
});

function App() {
  const token = useToken();
  const live = useLiveEvents(queryClient, token);
  useSignOutAtExpiry(token);
  // Nothing read with one token is shown to the next. The sign-in form's query is left alone: it has just started.
  useEffect(() => {
    if (!token) queryClient.removeQueries({ predicate: (q) => q.queryKey[0] !== signInOptionsKey[0] });
  }, [token]);
  if (window.location.pathname === callbackPath) return <OidcCallback />;
  if (!token) return <SignIn />;
  return (
    <LiveContext.Provider value={live}>
      <RouterProvider router={router} />
    </LiveContext.Provider>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <App />
    </QueryClientProvider>
  </StrictMode>,
);

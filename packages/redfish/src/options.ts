import type { TlsPolicy } from '@fleet/http';
import type { Dispatcher } from 'undici';
import type { DiscoveryCache } from './discovery-cache.js';
import type { SiteLimiter } from './limiter.js';

export interface RedfishCredentials {
  username: string;
  password: string;
}

/** The one logging call the client makes; pino and console-like loggers both fit. */
export interface RedfishLogger {
  warn(obj: object, msg: string): void;
}

/**
 * How the BMC's certificate is checked. Verified against the system store by default;
 * a site CA bundle and/or a pinned leaf fingerprint narrow that, `insecure` turns it off.
 * No client certificate: BMCs authenticate Fleet by credentials.
 */
export type RedfishTlsOptions = Omit<TlsPolicy, 'clientCertPem' | 'clientKeyPem'>;

export type RedfishAuthMode = 'basic' | 'session';

export interface RedfishClientOptions {
  /** e.g. https://10.0.0.5 or http://127.1.0.7:8000 */
  baseUrl: string;
  credentials: RedfishCredentials;
  /** The inventory device behind this BMC (its id), named in errors such as a refused ResetType. */
  device?: string;
  /** `basic` (default) sends credentials on every call; `session` uses one SessionService session per client. */
  auth?: RedfishAuthMode;
  /** TCP + TLS handshake budget. Default 10 s. */
  connectTimeoutMs?: number;
  /** Whole-request budget for ordinary calls (headers and body). Default 30 s. */
  requestTimeoutMs?: number;
  /** Whole-request budget for firmware uploads. Default 600 s. */
  uploadTimeoutMs?: number;
  /** Largest answer read; a longer one is refused (Internal) rather than buffered. Default 16 MiB. */
  maxResponseBytes?: number;
  /** Attempts on retryable failures (connection errors, 503, idempotent timeouts). Default 3. */
  maxAttempts?: number;
  /** First backoff step; doubles per attempt with ±50% jitter. Default 250 ms. */
  retryBaseDelayMs?: number;
  /** Ceiling for one backoff wait, including a BMC's Retry-After. Default 30 s. */
  maxRetryDelayMs?: number;
  /** Shared cap on in-flight requests across all BMCs of a site. */
  siteLimiter?: SiteLimiter;
  tls?: RedfishTlsOptions;
  logger?: RedfishLogger;
  /** Bring your own dispatcher (tests, proxies); the client then does not own or close it. */
  dispatcher?: Dispatcher;
  /** Cancels waits and in-flight requests of this client. */
  signal?: AbortSignal;
  /** What discovery found, shared with the process's other clients of the same BMC (discovery-cache.ts). */
  discovery?: DiscoveryCache;
}

export const defaults = {
  connectTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  uploadTimeoutMs: 600_000,
  // The largest document of the GH200 capture is 130 kB: a BMC's answer past this is broken, not big.
  maxResponseBytes: 16 * 1024 * 1024,
  maxAttempts: 3,
  retryBaseDelayMs: 250,
  maxRetryDelayMs: 30_000,
} as const;

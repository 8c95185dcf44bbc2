import type { TlsPolicy } from '@fleet/http';
import type { Dispatcher } from 'undici';

export interface NvueCredentials {
  username: string;
  password: string;
}

/** The one logging call the client makes; pino and console-like loggers both fit. */
export interface NvueLogger {
  warn(obj: object, msg: string): void;
}

/**
 * How the switch's certificate is checked: against the system store by default; a site CA
 * bundle and/or a pinned leaf fingerprint narrow that, `insecure` turns it off. A client
 * certificate is presented when the switch's API requires mTLS.
 */
export type NvueTlsOptions = TlsPolicy;

export interface NvueClientOptions {
  /** https://10.0.0.9 on a real switch; http://127.0.0.1:8444 for the simulator. The base path /nvue_v1 is added. */
  baseUrl: string;
  /** Names the switch in errors and logs; baseUrl when absent. */
  switchId?: string;
  credentials: NvueCredentials;
  tls?: NvueTlsOptions;
  /** TCP + TLS handshake budget. Default 10 s. */
  connectTimeoutMs?: number;
  /** Whole-request budget (headers and body). Default 30 s. */
  requestTimeoutMs?: number;
  /** Largest answer read; a longer one is refused (Protocol) rather than buffered. Default 16 MiB. */
  maxResponseBytes?: number;
  /** Attempts on retryable failures (connection errors, 503, timeouts of requests safe to resend). Default 3. */
  maxAttempts?: number;
  /** First backoff step; doubles per attempt with ±50% jitter. Default 250 ms. */
  retryBaseDelayMs?: number;
  /** Ceiling for one backoff wait, including a Retry-After. Default 30 s. */
  maxRetryDelayMs?: number;
  logger?: NvueLogger;
  /** Bring your own dispatcher (tests, proxies); the client then does not own or close it. */
  dispatcher?: Dispatcher;
  /** Cancels waits and in-flight requests of this client. */
  signal?: AbortSignal;
}

export const defaults = {
  connectTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  // NVUE's answers are a few kB; one past this is broken, not big.
  maxResponseBytes: 16 * 1024 * 1024,
  maxAttempts: 3,
  retryBaseDelayMs: 250,
  maxRetryDelayMs: 30_000,
} as const;

export const BASE_PATH = '/nvue_v1';

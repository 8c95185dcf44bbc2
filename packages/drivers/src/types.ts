import type { BmcTarget, PowerState, RedfishResetType } from '@fleet/domain';
import type { RedfishClientOptions } from '@fleet/redfish';

export interface BmcCredentials {
  username: string;
  password: string;
}

/** How a site reaches its BMCs: auth mode, TLS policy, timeouts and the site-wide cap. */
export type RedfishTransport = Pick<
  RedfishClientOptions,
  'auth' | 'tls' | 'siteLimiter' | 'logger' | 'connectTimeoutMs' | 'requestTimeoutMs' | 'uploadTimeoutMs' | 'maxAttempts'
>;

export interface DriverContext {
  target: BmcTarget;
  credentials: BmcCredentials;
  signal?: AbortSignal;
  redfish?: RedfishTransport;
}

/** What every node kind with a host power domain offers. */
export interface PowerDriver {
  readonly nodeType: string;
  powerState(): Promise<PowerState>;
  reset(type: RedfishResetType): Promise<void>;
  close(): Promise<void>;
}

export type PowerDriverFactory = (ctx: DriverContext) => PowerDriver;

export class UnsupportedNodeTypeError extends Error {
  constructor(readonly nodeType: string) {
    super(`no driver for node type ${nodeType}`);
    this.name = 'UnsupportedNodeTypeError';
  }
}

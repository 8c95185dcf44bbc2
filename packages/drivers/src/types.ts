import type { BmcTarget, PowerState, RedfishResetType } from '@fleet/domain';

export interface BmcCredentials {
  username: string;
  password: string;
}

export interface DriverContext {
  target: BmcTarget;
  credentials: BmcCredentials;
  signal?: AbortSignal;
  connectTimeoutMs?: number;
  requestTimeoutMs?: number;
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

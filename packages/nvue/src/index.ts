export { NvueClient, type CallOptions, type NvueResponse, type HttpMethod } from './client.js';
export { NvueError, isRetryableDuringReboot, type NvueErrorKind } from './errors.js';
export {
  defaults,
  type NvueClientOptions,
  type NvueCredentials,
  type NvueLogger,
  type NvueTlsOptions,
} from './options.js';
export { CertificatePinError } from '@fleet/http';
export type { PollOptions } from './poll.js';
export * from './revisions.js';
export * from './actions.js';
export * from './system.js';
export * from './image.js';
export * from './platform.js';
export * from './certificates.js';
export * from './filenames.js';

export { SlurmClient, type SubmitSpec, type SubmitOnceResult, type FollowOptions, type CallOptions } from './client.js';
export { SlurmError, slurmErrno, type SlurmErrorKind, type SlurmApiError } from './errors.js';
export { decodeWaitStatus, finishedJobStates, outputPath, type SlurmJob } from './job.js';
export { defaults, tokenFromFile, type SlurmClientOptions, type SlurmToken } from './options.js';

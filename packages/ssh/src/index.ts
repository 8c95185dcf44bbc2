export { connect, SshSession, type SshConnectOptions } from './session.js';
export { SshError, HostKeyMismatchError, SftpStallError, type SshErrorKind } from './errors.js';
export { fingerprintOf, normaliseFingerprint, type HostKeyPolicy } from './host-key.js';
export type { ExecOptions, ExecResult } from './exec.js';
export type { UploadOptions, UploadResult, RemoteEntry } from './sftp.js';

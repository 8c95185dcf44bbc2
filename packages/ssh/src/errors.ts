export type SshErrorKind =
  /** TCP or SSH handshake failed: refused, unreachable, DNS, reset, protocol. */
  | 'Connect'
  | 'Timeout'
  /** The switch refused the credentials. */
  | 'Auth'
  | 'HostKeyMismatch'
  | 'Exec'
  | 'Sftp'
  /** An SFTP transfer made no progress for the step timeout. */
  | 'Stall'
  /** The local file to upload cannot be read. */
  | 'LocalFile'
  /** The session was closed (by the caller or the switch) before or during the call. */
  | 'Closed';

/**
 * A failed SSH or SFTP call, naming the device, the host, the step and the cause. Secrets
 * never appear: the client scrubs the password out of every cause it reports.
 */
export class SshError extends Error {
  constructor(
    readonly kind: SshErrorKind,
    readonly device: string,
    readonly host: string,
    readonly step: string,
    readonly causeText: string,
    opts: { cause?: unknown } = {},
  ) {
    super(
      `${kind}: ${device === host ? host : `${device} (${host})`} ${step}: ${causeText}`,
      opts.cause === undefined ? undefined : { cause: opts.cause },
    );
    this.name = 'SshError';
  }

  /** Worth trying again later (the switch may be rebooting or the network flaky). */
  get retryable(): boolean {
    return this.kind === 'Connect' || this.kind === 'Timeout' || this.kind === 'Stall' || this.kind === 'Closed';
  }
}

/** The switch presented a host key other than the pinned (or first-seen) one: possibly not the switch at all. */
export class HostKeyMismatchError extends SshError {
  constructor(
    device: string,
    host: string,
    readonly expected: string,
    readonly actual: string,
  ) {
    super('HostKeyMismatch', device, host, 'host-key', `host key ${actual} does not match the expected ${expected}`);
    this.name = 'HostKeyMismatchError';
  }

  override get retryable(): boolean {
    return false;
  }
}

/** No SFTP progress for `stepTimeoutMs`: the transfer was abandoned after `bytes` were acknowledged. */
export class SftpStallError extends SshError {
  constructor(
    device: string,
    host: string,
    readonly remotePath: string,
    readonly bytes: number,
    readonly stepTimeoutMs: number,
  ) {
    super('Stall', device, host, 'upload', `no progress on ${remotePath} for ${stepTimeoutMs} ms after ${bytes} bytes`);
    this.name = 'SftpStallError';
  }
}

/** Who an error is about. */
export interface SshTarget {
  device: string;
  host: string;
  /** Removes secrets from text taken from the library before it goes into an error. */
  scrub(text: string): string;
}

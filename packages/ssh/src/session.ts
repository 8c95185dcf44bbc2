import { connect as netConnect } from 'node:net';
import ssh2, { type Client, type ClientChannel, type SFTPWrapper } from 'ssh2';
import { coalesceWrites } from './coalesce.js';
import { runExec, type ExecOptions, type ExecResult } from './exec.js';
import { HostKeyMismatchError, SshError, type SshTarget } from './errors.js';
import { checkHostKey, type HostKeyPolicy } from './host-key.js';
import {
  listDir,
  makeDirs,
  remoteSize,
  uploadFile,
  type RemoteEntry,
  type UploadOptions,
  type UploadResult,
} from './sftp.js';

export interface SshConnectOptions {
  host: string;
  port?: number;
  /** Names the device in errors; the host when absent. */
  device?: string;
  username: string;
  password?: string;
  /** OpenSSH/PEM private key. */
  privateKey?: string | Buffer;
  passphrase?: string;
  hostKey: HostKeyPolicy;
  /** TCP connect, handshake and login together. Default 10 s. */
  connectTimeoutMs?: number;
  /** SSH keepalives, so a dead switch is noticed on an idle session. Default 15 s. */
  keepaliveIntervalMs?: number;
  signal?: AbortSignal;
}

/** Opens an SSH session, verifying the host key before any credential is sent. */
export async function connect(opts: SshConnectOptions): Promise<SshSession> {
  opts.signal?.throwIfAborted();
  const secrets = [opts.password, opts.passphrase].filter((s): s is string => !!s);
  const target: SshTarget = {
    device: opts.device ?? opts.host,
    host: opts.host,
    scrub: (text) => secrets.reduce((t, s) => t.split(s).join('***'), text),
  };
  const timeoutMs = opts.connectTimeoutMs ?? 10_000;
  const conn: Client = new ssh2.Client();
  let mismatch: HostKeyMismatchError | undefined;
  let policyError: unknown;
  let fingerprint = '';
  let cipher = '';
  conn.once('handshake', (negotiated: { cs: { cipher: string } }) => (cipher = negotiated.cs.cipher));
  return new Promise<SshSession>((resolve, reject) => {
    const onError = (err: Error & { level?: string; code?: string }) =>
      fail(mismatch ?? policyError ?? connectError(target, err));
    const onClose = () =>
      fail(
        mismatch ??
          new SshError('Connect', target.device, target.host, 'connect', 'connection closed during the handshake'),
      );
    const onAbort = () => fail(opts.signal?.reason);
    const cleanup = () => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      conn.off('error', onError).off('close', onClose);
    };
    const fail = (err: unknown) => {
      cleanup();
      conn.removeAllListeners('ready');
      conn.on('error', () => undefined);
      conn.destroy();
      reject(err);
    };
    const timer = setTimeout(
      () =>
        fail(new SshError('Timeout', target.device, target.host, 'connect', `no SSH session within ${timeoutMs} ms`)),
      timeoutMs,
    );
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    conn.once('ready', () => {
      cleanup();
      // SSH packets are already batched; Nagle would hold back the tail of each write burst.
      conn.setNoDelay(true);
      resolve(new SshSession(conn, target, fingerprint, cipher));
    });
    conn.on('error', onError).on('close', onClose);
    // Our socket rather than ssh2's, so that its writes can be coalesced; ssh2 waits for it to connect.
    const sock = netConnect({ host: opts.host, port: opts.port ?? 22 });
    coalesceWrites(sock);
    conn.connect({
      sock,
      host: opts.host,
      port: opts.port ?? 22,
      username: opts.username,
      ...(opts.password !== undefined ? { password: opts.password } : {}),
      ...(opts.privateKey !== undefined ? { privateKey: opts.privateKey } : {}),
      ...(opts.passphrase !== undefined ? { passphrase: opts.passphrase } : {}),
      // Our own timer covers the whole connect; ssh2's would only cover the handshake.
      readyTimeout: timeoutMs + 1_000,
      keepaliveInterval: opts.keepaliveIntervalMs ?? 15_000,
      keepaliveCountMax: 3,
      hostVerifier: (key: Buffer, verify: (ok: boolean) => void) => {
        checkHostKey(opts.hostKey, key).then(
          (check) => {
            if (check.ok) fingerprint = check.fingerprint;
            else mismatch = new HostKeyMismatchError(target.device, target.host, check.expected, check.actual);
            verify(check.ok);
          },
          (err: unknown) => {
            policyError = new SshError(
              'HostKeyMismatch',
              target.device,
              target.host,
              'host-key',
              `the trust-on-first-use callback failed: ${(err as Error).message}`,
              { cause: err },
            );
            verify(false);
          },
        );
      },
    });
  });
}

function connectError(target: SshTarget, err: Error & { level?: string; code?: string }): SshError {
  const text = target.scrub(err.message);
  if (err.level === 'client-authentication')
    return new SshError('Auth', target.device, target.host, 'auth', `login refused: ${text}`, { cause: err });
  if (err.level === 'client-timeout')
    return new SshError('Timeout', target.device, target.host, 'connect', text, { cause: err });
  return new SshError('Connect', target.device, target.host, 'connect', err.code ? `${err.code}: ${text}` : text, {
    cause: err,
  });
}

/**
 * One SSH connection to a switch: exec channels on demand, one SFTP channel for metadata
 * (opened on first use, reopened if it closes) and a channel of its own for each upload.
 */
export class SshSession {
  private sftpChannel: Promise<SFTPWrapper> | undefined;
  private closedBy: string | undefined;

  constructor(
    private readonly conn: Client,
    private readonly target: SshTarget,
    /** The host key's `SHA256:` fingerprint, as verified. */
    readonly hostKeySha256: string,
    /** The negotiated client-to-server cipher, e.g. `aes128-gcm@openssh.com` (with AES-NI, ssh2's first choice). */
    readonly cipher = '',
  ) {
    conn.on('error', () => undefined);
    conn.once('close', () => {
      this.closedBy ??= 'the connection was closed';
      this.sftpChannel = undefined;
    });
  }

  async exec(command: string, opts: ExecOptions = {}): Promise<ExecResult> {
    this.assertOpen('exec');
    return runExec(this.conn, this.target, command, opts);
  }

  /** Size of a remote file, or undefined when it does not exist. */
  async stat(remotePath: string): Promise<number | undefined> {
    return remoteSize(await this.sftp(), this.target, remotePath);
  }

  async list(dir: string): Promise<RemoteEntry[]> {
    return listDir(await this.sftp(), this.target, dir);
  }

  async mkdirp(dir: string): Promise<void> {
    return makeDirs(await this.sftp(), this.target, dir);
  }

  /** Uploads a file (see uploadFile) and verifies its size on the switch. */
  async upload(localPath: string, remotePath: string, opts: UploadOptions = {}): Promise<UploadResult> {
    this.assertOpen('upload');
    return uploadFile(() => this.subsystemChannel(), this.target, localPath, remotePath, opts);
  }

  /**
   * Skips the upload when the remote file already has the local size (RMS's rule for
   * re-staging an NVOS image, docs/reference/rms-behaviours.md#nvos-image-install), so a retried job does not send
   * gigabytes again.
   */
  async uploadIfDifferent(localPath: string, remotePath: string, opts: UploadOptions = {}): Promise<UploadResult> {
    return this.upload(localPath, remotePath, { ...opts, skipSameSize: true });
  }

  close(): void {
    this.closedBy ??= 'the session was closed';
    this.conn.end();
  }

  private assertOpen(step: string): void {
    if (this.closedBy) throw new SshError('Closed', this.target.device, this.target.host, step, this.closedBy);
  }

  private sftp(): Promise<SFTPWrapper> {
    this.assertOpen('sftp');
    this.sftpChannel ??= new Promise<SFTPWrapper>((resolve, reject) =>
      this.conn.sftp((err, sftp) => {
        if (err)
          return reject(
            new SshError(
              'Sftp',
              this.target.device,
              this.target.host,
              'sftp',
              `cannot open SFTP: ${this.target.scrub(err.message)}`,
              { cause: err },
            ),
          );
        sftp.once('close', () => {
          if (this.sftpChannel === current) this.sftpChannel = undefined;
        });
        resolve(sftp);
      }),
    );
    const current = this.sftpChannel;
    current.catch(() => {
      if (this.sftpChannel === current) this.sftpChannel = undefined;
    });
    return current;
  }

  /** A new SFTP subsystem channel, spoken to by the caller (see SftpWriter). */
  private subsystemChannel(): Promise<ClientChannel> {
    return new Promise((resolve, reject) => {
      const fail = (err: Error) =>
        reject(
          new SshError(
            'Sftp',
            this.target.device,
            this.target.host,
            'upload',
            `cannot open SFTP: ${this.target.scrub(err.message)}`,
            { cause: err },
          ),
        );
      try {
        this.conn.subsys('sftp', (err, channel) => (err ? fail(err) : resolve(channel)));
      } catch (err) {
        fail(err as Error);
      }
    });
  }
}

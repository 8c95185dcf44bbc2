import { stat as statLocal } from 'node:fs/promises';
import { posix } from 'node:path';
import type { Duplex } from 'node:stream';
import type { SFTPWrapper, Stats } from 'ssh2';
import { SftpStallError, SshError, type SshTarget } from './errors.js';
import { pipelinedPut } from './put.js';
import { SftpWriter } from './sftp-wire.js';

export interface UploadOptions {
  /**
   * No acknowledged progress for this long is a stall (SftpStallError). Default 30 s
   * (docs/reference/rms-behaviours.md#nvos-image-install).
   */
  stepTimeoutMs?: number;
  /** The whole transfer. Default 3,600 s. */
  overallTimeoutMs?: number;
  /**
   * Leave the switch's file alone when it already has the local file's size (RMS's rule for re-staging an
   * NVOS image, docs/reference/rms-behaviours.md#nvos-image-install), so a retried job does not send gigabytes
   * again.
   */
  skipSameSize?: boolean;
  signal?: AbortSignal;
  onProgress?: (bytes: number, total: number) => void;
  /** Writes in flight. Default: as many as fill the SSH channel window (2 MiB), plus one. */
  concurrency?: number;
  /**
   * Bytes per write. Default: what fills one SSH packet (32 KiB with the request), as OpenSSH's sftp
   * sends. Lowered to what the server takes: what it states through OpenSSH's limits extension
   * (255 KiB for OpenSSH), else 32 KiB.
   */
  chunkSize?: number;
}

export interface UploadResult {
  remotePath: string;
  bytes: number;
  /** False when `skipSameSize` found the same size already there. */
  uploaded: boolean;
}

export interface RemoteEntry {
  name: string;
  size: number;
  isDirectory: boolean;
}

const NO_SUCH_FILE = 2;

/**
 * Streams a local file into a remote one over an SFTP channel of its own (`openChannel`), where
 * it also checks the remote size before (with `skipSameSize`) and after: pipelinedPut with the
 * SSH window's worth of writes in flight, read from disk as they go, never the whole file in
 * memory. Progress is every acknowledged write; a stall, the overall timeout or cancellation
 * abandons the channel (a stalled transfer cannot be cancelled any other way).
 */
export async function uploadFile(
  openChannel: () => Promise<Duplex & { close(): void }>,
  target: SshTarget,
  localPath: string,
  remotePath: string,
  opts: UploadOptions = {},
): Promise<UploadResult> {
  opts.signal?.throwIfAborted();
  const total = await localSize(target, localPath);
  const stepMs = opts.stepTimeoutMs ?? 30_000;
  const overallMs = opts.overallTimeoutMs ?? 3_600_000;
  let acked = 0;
  return new Promise<UploadResult>((resolve, reject) => {
    let settled = false;
    let channel: (Duplex & { close(): void }) | undefined;
    const stop = new AbortController();
    const settle = (err: unknown, result?: UploadResult) => {
      if (settled) return;
      settled = true;
      stop.abort();
      clearTimeout(stall);
      clearTimeout(overall);
      opts.signal?.removeEventListener('abort', onAbort);
      if (result) {
        channel?.end();
        return resolve(result);
      }
      channel?.close();
      reject(err);
    };
    const stall = setTimeout(
      () => settle(new SftpStallError(target.device, target.host, remotePath, acked, stepMs)),
      stepMs,
    );
    const overall = setTimeout(
      () =>
        settle(
          new SshError(
            'Timeout',
            target.device,
            target.host,
            'upload',
            `${remotePath} not uploaded within ${overallMs} ms (${acked} of ${total} bytes)`,
          ),
        ),
      overallMs,
    );
    const onAbort = () => settle(opts.signal?.reason);
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const transfer = async (): Promise<UploadResult> => {
      channel = await openChannel();
      // Given up on while the channel opened: settle found none to close.
      if (settled) channel.close();
      const sftp = await SftpWriter.start(channel);
      if (opts.skipSameSize && (await sftp.size(remotePath)) === total)
        return { remotePath, bytes: total, uploaded: false };
      await pipelinedPut(sftp, localPath, remotePath, {
        ...(opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {}),
        ...(opts.chunkSize !== undefined ? { chunkSize: opts.chunkSize } : {}),
        size: total,
        signal: stop.signal,
        onAck: (transferred) => {
          if (settled) return;
          acked = transferred;
          stall.refresh();
          opts.onProgress?.(transferred, total);
        },
      });
      const size = await sftp.size(remotePath);
      if (size !== total)
        throw new SshError(
          'Sftp',
          target.device,
          target.host,
          'verify',
          `${remotePath} is ${size ?? 'missing'} bytes after the upload, expected ${total}`,
        );
      return { remotePath, bytes: total, uploaded: true };
    };
    transfer().then(
      (result) => settle(undefined, result),
      (err: Error) => settle(err instanceof SshError ? err : sftpError(target, 'upload', remotePath, err)),
    );
  });
}

/** Size of a remote file, or undefined when there is none. */
export function remoteSize(sftp: SFTPWrapper, target: SshTarget, remotePath: string): Promise<number | undefined> {
  return new Promise((resolve, reject) =>
    sftp.stat(remotePath, (err, stats: Stats) => {
      if (!err) return resolve(stats.size);
      if ((err as { code?: unknown }).code === NO_SUCH_FILE) return resolve(undefined);
      reject(sftpError(target, 'stat', remotePath, err));
    }),
  );
}

export function listDir(sftp: SFTPWrapper, target: SshTarget, dir: string): Promise<RemoteEntry[]> {
  return new Promise((resolve, reject) =>
    sftp.readdir(dir, (err, list) => {
      if (err) return reject(sftpError(target, 'list', dir, err));
      resolve(
        list
          .map((e) => ({ name: e.filename, size: e.attrs.size, isDirectory: e.attrs.isDirectory() }))
          .sort((a, b) => a.name.localeCompare(b.name)),
      );
    }),
  );
}

/** Creates `dir` and any missing parents. */
export async function makeDirs(sftp: SFTPWrapper, target: SshTarget, dir: string): Promise<void> {
  const parts = posix.normalize(dir).split('/').filter(Boolean);
  for (let i = 1; i <= parts.length; i++) {
    const path = `/${parts.slice(0, i).join('/')}`;
    if ((await remoteSize(sftp, target, path)) !== undefined) continue;
    await new Promise<void>((resolve, reject) =>
      sftp.mkdir(path, (err) => (err ? reject(sftpError(target, 'mkdir', path, err)) : resolve())),
    );
  }
}

async function localSize(target: SshTarget, localPath: string): Promise<number> {
  try {
    const s = await statLocal(localPath);
    if (!s.isFile()) throw new Error('not a regular file');
    return s.size;
  } catch (err) {
    throw new SshError(
      'LocalFile',
      target.device,
      target.host,
      'upload',
      `cannot read ${localPath}: ${(err as Error).message}`,
      { cause: err },
    );
  }
}

function sftpError(target: SshTarget, step: string, path: string, err: Error): SshError {
  return new SshError('Sftp', target.device, target.host, step, `${path}: ${target.scrub(err.message)}`, {
    cause: err,
  });
}

import { open } from 'node:fs/promises';
import type { SFTPWrapper } from 'ssh2';

/** Bytes per disk read: one thread-pool round trip feeds several SFTP writes. */
const READ_BLOCK = 1024 * 1024;

export interface PutOptions {
  /** SFTP writes in flight. */
  concurrency: number;
  /** Bytes per SFTP write. */
  chunkSize: number;
  /** Bytes to send (the local file's size). */
  size: number;
  /** Called with the bytes acknowledged so far, after each acknowledged write. */
  onAck(bytes: number): void;
  /** Aborted once the caller gave up: no further reads or writes start, and the call returns at once. */
  signal: AbortSignal;
}

/**
 * Streams a local file into a remote one with pipelined writes. Unlike ssh2's fastPut, which
 * reads each write's bytes with its own disk read, it reads in READ_BLOCK blocks and slices them
 * into `chunkSize` writes, so the event loop spends its time on the SSH stream, not on thread-pool
 * hops. Memory: the writes in flight plus one block read ahead.
 */
export async function pipelinedPut(
  sftp: SFTPWrapper,
  localPath: string,
  remotePath: string,
  opts: PutOptions,
): Promise<void> {
  const { concurrency, chunkSize, size } = opts;
  const blockSize = Math.max(1, Math.floor(READ_BLOCK / chunkSize)) * chunkSize;
  const free = Array.from({ length: Math.ceil((concurrency * chunkSize) / blockSize) + 1 }, () =>
    Buffer.allocUnsafeSlow(blockSize),
  );
  let inFlight = 0;
  let acked = 0;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const until = async (ready: () => boolean) => {
    for (;;) {
      if (failure) throw failure;
      if (opts.signal.aborted) throw new Error('the upload was stopped');
      if (ready()) return;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  };
  const settled = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };

  opts.signal.addEventListener('abort', settled, { once: true });
  const local = await open(localPath, 'r');
  try {
    const handle = await new Promise<Buffer>((resolve, reject) =>
      sftp.open(remotePath, 'w', (err, h) => (err ? reject(err) : resolve(h))),
    );
    try {
      for (let position = 0; position < size;) {
        await until(() => free.length > 0);
        const block = free.pop()!;
        const { bytesRead } = await local.read(block, 0, Math.min(blockSize, size - position), position);
        if (bytesRead === 0) throw new Error(`${localPath} ended at ${position} of ${size} bytes`);
        let writes = Math.ceil(bytesRead / chunkSize);
        for (let offset = 0; offset < bytesRead; offset += chunkSize) {
          await until(() => inFlight < concurrency);
          const length = Math.min(chunkSize, bytesRead - offset);
          inFlight++;
          sftp.write(handle, block, offset, length, position + offset, (err) => {
            inFlight--;
            if (err) failure ??= err;
            else opts.onAck((acked += length));
            if (--writes === 0) free.push(block);
            settled();
          });
        }
        position += bytesRead;
      }
      await until(() => inFlight === 0);
    } catch (err) {
      // After a failed write or a stop the caller abandons the channel; otherwise let go of the handle.
      if (!failure && !opts.signal.aborted) sftp.close(handle, () => undefined);
      throw err;
    }
    await new Promise<void>((resolve, reject) => sftp.close(handle, (err) => (err ? reject(err) : resolve())));
  } finally {
    opts.signal.removeEventListener('abort', settled);
    await local.close();
  }
}

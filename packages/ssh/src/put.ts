import { open } from 'node:fs/promises';
import { SftpWriter } from './sftp-wire.js';

/**
 * The channel window and the largest channel packet an OpenSSH server (and ssh2's) grants a
 * session: the most data in flight the switch lets us send (writes beyond it would only wait on
 * our side), and what one SSH packet carries.
 */
const SSH_WINDOW = 2 * 1024 * 1024;
const SSH_PACKET = 32 * 1024;
/** Disk bytes read at once (one thread-pool round trip): writes are topped up this many at a time. */
const READ_BATCH = 256 * 1024;

export interface PutOptions {
  /** SFTP writes in flight. Default: enough to fill the SSH window, and one more ready behind it. */
  concurrency?: number;
  /** Bytes per SFTP write (lowered to what the server takes). Default: what fills one SSH packet. */
  chunkSize?: number;
  /** Bytes to send (the local file's size). */
  size: number;
  /** Called with the bytes acknowledged so far, after each acknowledged write. */
  onAck(bytes: number): void;
  /** Aborted once the caller gave up: no further reads or writes start, and the call returns at once. */
  signal: AbortSignal;
}

/**
 * Streams a local file into a remote one (OPEN, WRITEs, CLOSE on `sftp`), with the SSH window's
 * worth of writes in flight. By default each write request fills one SSH packet, so
 * neither end puts a write together from several (ssh2's server copies every such write into a
 * buffer of its own). Requests are built in buffers reused for the whole upload: the file is
 * read (a batch of writes per readv) straight behind each request header, and a buffer goes back
 * to the pool once the channel has taken it. The upload thus copies each byte once, into ssh2's
 * SSH packets, and leaves no buffer per write for the garbage collector: with a hundred uploads
 * at once, collecting them cost the satellite more CPU than encrypting. The caller abandons
 * the channel when this fails or is stopped.
 */
export async function pipelinedPut(
  sftp: SftpWriter,
  localPath: string,
  remotePath: string,
  opts: PutOptions,
): Promise<void> {
  const { size } = opts;
  let inFlight = 0;
  let acked = 0;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const check = () => {
    if (failure) throw failure;
    if (opts.signal.aborted) throw new Error('the upload was stopped');
  };
  const until = async (ready: () => boolean) => {
    for (check(); !ready(); check()) await new Promise<void>((resolve) => (wake = resolve));
  };
  const settled = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };

  opts.signal.addEventListener('abort', settled, { once: true });
  const local = await open(localPath, 'r');
  try {
    const handle = await sftp.open(remotePath);
    const head = SftpWriter.writeHeaderBytes(handle);
    const chunk = Math.max(1, Math.min(opts.chunkSize ?? SSH_PACKET - head, sftp.maxWrite));
    const concurrency = opts.concurrency ?? Math.ceil(SSH_WINDOW / chunk) + 1;
    const batch = Math.min(concurrency, Math.ceil(READ_BATCH / chunk));
    const pool: Buffer[] = [];
    for (let position = 0; position < size;) {
      const left = Math.ceil((size - position) / chunk);
      await until(() => concurrency - inFlight >= Math.min(batch, left));
      const count = Math.min(concurrency - inFlight, left);
      const packets = Array.from({ length: count }, () => pool.pop() ?? Buffer.allocUnsafeSlow(head + chunk));
      const lengths = packets.map((_, i) => Math.min(chunk, size - position - i * chunk));
      const want = lengths.reduce((a, b) => a + b, 0);
      const { bytesRead } = await local.readv(
        packets.map((p, i) => p.subarray(head, head + lengths[i]!)),
        position,
      );
      if (bytesRead !== want) throw new Error(`${localPath} ended at ${position + bytesRead} of ${size} bytes`);
      check();
      packets.forEach((packet, i) => {
        const length = lengths[i]!;
        inFlight++;
        sftp.sendWrite(
          packet,
          handle,
          position,
          length,
          () => pool.push(packet),
          (err) => {
            inFlight--;
            if (err) failure ??= err;
            else opts.onAck((acked += length));
            settled();
          },
        );
        position += length;
      });
    }
    await until(() => inFlight === 0);
    await sftp.close(handle);
  } finally {
    opts.signal.removeEventListener('abort', settled);
    await local.close();
  }
}

import type { Client, ClientChannel } from 'ssh2';
import { SshError, type SshTarget } from './errors.js';

export interface ExecOptions {
  /** Give up (SshError Timeout) and kill the command after this long. Default 60 s. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Bytes kept of stdout and of stderr each; the rest is read and dropped. Default 1 MiB. */
  maxOutputBytes?: number;
}

export interface ExecResult {
  /** Exit status; null when the command died of a signal. */
  code: number | null;
  signal?: string;
  stdout: string;
  stderr: string;
  /** Some output was dropped at maxOutputBytes. */
  truncated: boolean;
}

/** Collects a stream up to a cap, counting what it drops. */
class CappedBuffer {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  dropped = false;

  constructor(private readonly cap: number) {}

  push(chunk: Buffer): void {
    const room = this.cap - this.size;
    if (chunk.length > room) this.dropped = true;
    if (room <= 0) return;
    const kept = chunk.subarray(0, room);
    this.chunks.push(kept);
    this.size += kept.length;
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

/**
 * Runs one command on a channel of its own. A non-zero exit is a result, not an error; the
 * caller judges it. On timeout or cancellation the command is killed and the channel closed.
 * Errors name the program only, never the command line (it may carry secrets).
 */
export function runExec(conn: Client, target: SshTarget, command: string, opts: ExecOptions = {}): Promise<ExecResult> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const cap = opts.maxOutputBytes ?? 1 << 20;
  const program = command.trim().split(/\s+/)[0] ?? '';
  const signal = opts.signal;
  return new Promise<ExecResult>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    let channel: ClientChannel | undefined;
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      fn();
    };
    const kill = () => {
      channel?.signal('KILL');
      channel?.close();
    };
    const timer = setTimeout(() => {
      kill();
      settle(() =>
        reject(
          new SshError(
            'Timeout',
            target.device,
            target.host,
            'exec',
            `${program} did not finish within ${timeoutMs} ms`,
          ),
        ),
      );
    }, timeoutMs);
    const onAbort = () => {
      kill();
      settle(() => reject(signal?.reason));
    };
    signal?.addEventListener('abort', onAbort, { once: true });

    conn.exec(command, (err, ch) => {
      if (err)
        return settle(() =>
          reject(
            new SshError(
              'Exec',
              target.device,
              target.host,
              'exec',
              `cannot start ${program}: ${target.scrub(err.message)}`,
              { cause: err },
            ),
          ),
        );
      channel = ch;
      if (settled) return kill();
      const out = new CappedBuffer(cap);
      const errOut = new CappedBuffer(cap);
      let code: number | null = null;
      let exitSignal: string | undefined;
      ch.on('data', (d: Buffer) => out.push(d));
      ch.stderr.on('data', (d: Buffer) => errOut.push(d));
      ch.on('exit', (c: number | null, sig?: string) => {
        code = c;
        exitSignal = sig;
      });
      ch.on('close', () =>
        settle(() =>
          resolve({
            code,
            ...(exitSignal ? { signal: exitSignal } : {}),
            stdout: out.text(),
            stderr: errOut.text(),
            truncated: out.dropped || errOut.dropped,
          }),
        ),
      );
    });
  });
}

import { Worker } from 'node:worker_threads';

/**
 * Bytes gathered before a block goes to the hashing thread: one message per block, not per SFTP
 * write (each message wakes the thread, which on busy cores costs more than the copy).
 */
const BLOCK = 2 * 1024 * 1024;
/** Blocks kept for reuse once the hashing thread hands them back. */
const SPARE_BLOCKS = 16;

/**
 * The hashing thread: one per simulator process, shared by every switch's uploads. Plain JS
 * (eval'd), so it runs the same under tsx and compiled. Messages in: {id, block, length} (the
 * block transferred; it is sent back for reuse), {id, end}, {id, drop}. Out: {block, bytes},
 * {id, digest}.
 */
const SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const hashes = new Map();
parentPort.on('message', (m) => {
  if (m.drop) return void hashes.delete(m.id);
  let hash = hashes.get(m.id);
  if (!hash) hashes.set(m.id, (hash = createHash('sha256')));
  if (m.block) {
    hash.update(new Uint8Array(m.block, 0, m.length));
    return parentPort.postMessage({ block: m.block, bytes: m.length }, [m.block]);
  }
  hashes.delete(m.id);
  parentPort.postMessage({ id: m.id, digest: hash.digest('hex') });
});
`;

let worker: Worker | undefined;
let nextId = 0;
const digests = new Map<number, { resolve(hex: string): void; reject(err: Error): void }>();
const spare: ArrayBuffer[] = [];
let backlog = 0;
/** Who waits for the backlog to fall to a mark. */
let waiting: { below: number; wake(): void }[] = [];

function thread(): Worker {
  if (worker) return worker;
  const w = new Worker(SOURCE, { eval: true, execArgv: [] });
  w.on('message', (m: { block?: ArrayBuffer; bytes?: number; id?: number; digest?: string }) => {
    if (m.block) {
      backlog -= m.bytes!;
      if (spare.length < SPARE_BLOCKS) spare.push(m.block);
      if (waiting.length > 0) wakeBelow(backlog);
      return idleCheck();
    }
    digests.get(m.id!)?.resolve(m.digest!);
    digests.delete(m.id!);
    idleCheck();
  });
  const fail = (err: Error) => {
    if (worker !== w) return;
    worker = undefined;
    backlog = 0;
    wakeBelow(0);
    for (const d of digests.values()) d.reject(err);
    digests.clear();
  };
  w.on('error', fail);
  w.on('exit', (code) => fail(new Error(`the upload hashing thread exited (code ${code})`)));
  worker = w;
  idleCheck();
  return w;
}

/** The thread keeps the process alive only while it owes an answer: idle, it must not hold a simulator open. */
function idleCheck(): void {
  if (backlog === 0 && digests.size === 0) worker?.unref();
  else worker?.ref();
}

/** Bytes handed to the hashing thread and not hashed yet, across all uploads. */
export function hashBacklog(): number {
  return backlog;
}

/** Resolves once at most `bytes` wait to be hashed (at once if that is so already). */
export function hashBacklogBelow(bytes: number): Promise<void> {
  return backlog <= bytes ? Promise.resolve() : new Promise((wake) => waiting.push({ below: bytes, wake }));
}

function wakeBelow(level: number): void {
  const ready = waiting.filter((w) => level <= w.below);
  waiting = waiting.filter((w) => level > w.below);
  for (const w of ready) w.wake();
}

/**
 * SHA-256 of a stream of writes, computed on the hashing thread so that the SFTP session's thread
 * only copies bytes: a switch with many uploads at once keeps up with its clients, as a real one
 * whose disk writes and checksums run beside its SSH daemon does.
 */
export class OffThreadHash {
  private readonly id = nextId++;
  private block: Buffer | undefined;
  private filled = 0;
  private done = false;
  /** The thread that holds this hash's state: a restarted thread would start it over. */
  private via: Worker | undefined;

  update(data: Buffer): void {
    for (let at = 0; at < data.length;) {
      this.block ??= Buffer.from(spare.pop() ?? new ArrayBuffer(BLOCK));
      const n = data.copy(this.block, this.filled, at);
      this.filled += n;
      at += n;
      if (this.filled === BLOCK) this.send();
    }
  }

  /** The hex digest of everything written, once the thread has hashed it. */
  digest(): Promise<string> {
    this.done = true;
    if (this.filled > 0) this.send();
    const w = thread();
    if (this.via && this.via !== w) return Promise.reject(new Error('the upload hashing thread restarted'));
    return new Promise<string>((resolve, reject) => {
      digests.set(this.id, { resolve, reject });
      w.postMessage({ id: this.id, end: true });
      idleCheck();
    });
  }

  /** Forgets the bytes written so far (the upload was overwritten or abandoned). */
  drop(): void {
    if (this.done) return;
    this.done = true;
    if (this.block) spare.push(this.block.buffer as ArrayBuffer);
    this.block = undefined;
    worker?.postMessage({ id: this.id, drop: true });
  }

  private send(): void {
    const block = this.block!.buffer as ArrayBuffer;
    const w = thread();
    if (this.via && this.via !== w) {
      // The state is lost with the old thread; digest() says so, so the bytes need no hashing.
      this.block = undefined;
      this.filled = 0;
      return;
    }
    this.via = w;
    backlog += this.filled;
    w.postMessage({ id: this.id, block, length: this.filled }, [block]);
    idleCheck();
    this.block = undefined;
    this.filled = 0;
  }
}

import { Writable } from 'node:stream';
import { checkAfterLastByte, type FwpkgInspection } from './inspector.js';
import { SLOT_BYTES, SlotHashers, type HasherRole } from './slot-hashers.js';
import { SlotPackageCheck } from './slot-package-check.js';

/**
 * Receives each filled slot (its bytes and their offset in the stream), e.g. to write them to disk. The slot's
 * memory is reused once the promise settles, so nothing may keep `bytes` past that; a rejection fails the stream.
 */
export type SlotForward = (bytes: Uint8Array, at: number) => Promise<void>;

/**
 * A Writable that copies what streams into it into shared-memory slots hashed on worker threads, so the thread
 * receiving the bytes (a socket's, usually) spends nothing on SHA-256, and hands each filled slot to `forward`:
 * one copy serves the hashing and the storing, in SLOT_BYTES writes. Await `result` after the stream finishes.
 * Worth it from tens of MiB on (each stream starts its threads); smaller streams hash faster in-thread.
 */
abstract class SlotStream<T> extends Writable {
  readonly result: Promise<T>;
  protected readonly hashers: SlotHashers;
  /** Bytes handed to the hashers so far. */
  protected size = 0;
  private current: { slot: number; view: Uint8Array } | undefined;
  private filled = 0;
  private settle!: { resolve(v: T): void; reject(e: Error): void };
  private settled = false;

  constructor(
    roles: HasherRole[],
    private readonly forward?: SlotForward,
  ) {
    super();
    this.hashers = new SlotHashers(roles);
    this.result = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
    this.result.catch(() => undefined);
  }

  /** Checks a filled slot's bytes before they are hashed and forwarded; throws to fail the stream. */
  protected abstract inspect(bytes: Uint8Array): void;
  /** The result from the hashers' digests (one list per role), once every byte went by. */
  protected abstract complete(digests: string[][]): T;

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    this.consume(chunk).then(() => done(), done);
  }

  override _final(done: (err?: Error | null) => void): void {
    this.finish().then((value) => {
      this.settled = true;
      this.settle.resolve(value);
      done();
    }, done);
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    this.hashers.close();
    if (!this.settled) {
      this.settled = true;
      this.settle.reject(err ?? new Error('the stream was destroyed before it ended'));
    }
    done(err);
  }

  private async consume(chunk: Buffer): Promise<void> {
    for (let offset = 0; offset < chunk.length;) {
      this.current ??= await this.hashers.take();
      const n = Math.min(chunk.length - offset, SLOT_BYTES - this.filled);
      this.current.view.set(chunk.subarray(offset, offset + n), this.filled);
      this.filled += n;
      offset += n;
      if (this.filled === SLOT_BYTES) this.submit();
    }
  }

  private submit(): void {
    const { slot, view } = this.current!;
    const bytes = view.subarray(0, this.filled);
    this.inspect(bytes);
    this.hashers.submit(slot, this.size, this.filled, this.forward?.(bytes, this.size));
    this.size += this.filled;
    this.current = undefined;
    this.filled = 0;
  }

  private async finish(): Promise<T> {
    if (this.filled > 0) this.submit();
    const digests = await this.hashers.digests();
    this.hashers.close();
    return this.complete(digests);
  }
}

/** FwpkgInspector's checks and result, with the package's and its images' digests on two worker threads. */
export class ParallelFwpkgInspector extends SlotStream<FwpkgInspection> {
  private readonly check: SlotPackageCheck;

  constructor(forward?: SlotForward) {
    super(['package', 'images'], forward);
    this.check = new SlotPackageCheck(this.hashers);
  }

  protected inspect(bytes: Uint8Array): void {
    this.check.take(bytes);
  }

  protected complete([packageDigests, componentSha256]: string[][]): FwpkgInspection {
    const header = this.check.finalHeader();
    checkAfterLastByte(header, this.size, this.check.payloadCrc);
    return { header, size: this.size, sha256: packageDigests![0]!, componentSha256: componentSha256! };
  }
}

/** The sha256 and size of whatever streams in, hashed on a worker thread. */
export class ParallelSha256 extends SlotStream<{ sha256: string; size: number }> {
  constructor(forward?: SlotForward) {
    super(['package'], forward);
  }

  protected inspect(): void {}

  protected complete([packageDigests]: string[][]): { sha256: string; size: number } {
    return { sha256: packageDigests![0]!, size: this.size };
  }
}

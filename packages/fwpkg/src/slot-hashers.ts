import { Worker } from 'node:worker_threads';

/** Bytes per slot: large enough that per-chunk overhead (a read or write, two messages) vanishes. */
export const SLOT_BYTES = 4 * 1024 * 1024;
/** Slots in flight: one being filled while the others are hashed (and written, where a caller writes them). */
const SLOTS = 4;

/** `package`: the sha256 of every byte; `images`: one sha256 per [start, end) range of the package. */
export type HasherRole = 'package' | 'images';

/**
 * The hashing threads. SHA-256 is inherently sequential, and a PLDM package's digest and its images' digests
 * cover the same bytes twice, so each runs on its own thread while the filling thread reads, parses and
 * stores. Plain JS (eval'd), so it runs the same under tsx and compiled.
 * Messages: {images: [start, end][]}, {slot, at, length} → {slot}, {end} → {digests}.
 */
const HASHER = `
const { parentPort, workerData } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const slots = workerData.slots.map(([at, length]) => new Uint8Array(workerData.memory, at, length));
const whole = workerData.role === 'package' ? createHash('sha256') : undefined;
let images = [];
let upcoming = [];
let current = [];
parentPort.on('message', (m) => {
  if (m.images) {
    images = m.images.map(([start, end]) => ({ start, end, hash: createHash('sha256') }));
    upcoming = [...images].sort((a, b) => b.start - a.start);
    return;
  }
  if (m.end) {
    parentPort.postMessage({ digests: whole ? [whole.digest('hex')] : images.map((i) => i.hash.digest('hex')) });
    return;
  }
  const bytes = slots[m.slot].subarray(0, m.length);
  if (whole) whole.update(bytes);
  else {
    const end = m.at + m.length;
    while (upcoming.length > 0 && upcoming[upcoming.length - 1].start < end) current.push(upcoming.pop());
    for (const image of current) {
      const from = Math.max(image.start, m.at);
      const to = Math.min(image.end, end);
      if (to > from) image.hash.update(bytes.subarray(from - m.at, to - m.at));
    }
    current = current.filter((image) => image.end > end);
  }
  parentPort.postMessage({ slot: m.slot });
});
`;

/** Each slot's [offset, length] in the slot memory. */
const slotRanges = Array.from({ length: SLOTS }, (_, slot) => [slot * SLOT_BYTES, SLOT_BYTES]);

/**
 * The slots' shared memory, page-aligned (a WebAssembly memory is mapped whole, where a SharedArrayBuffer sits
 * wherever malloc puts it), so a slot can be written to disk with O_DIRECT (SlotFile). V8 reserves about 10 GiB of
 * address space for each (guard regions; no memory is committed for them). Where it cannot (`ulimit -v`, a
 * `--jitless` node without WebAssembly), plain shared memory: slots are then written through the page cache.
 */
function slotMemory(): SharedArrayBuffer {
  const pages = (SLOTS * SLOT_BYTES) / 65_536;
  try {
    return new wasm!.Memory({ initial: pages, maximum: pages, shared: true }).buffer;
  } catch {
    return new SharedArrayBuffer(SLOTS * SLOT_BYTES);
  }
}

/** Node's WebAssembly global, which its type declarations leave out (they come with the DOM's). */
const wasm = (globalThis as unknown as { WebAssembly?: { Memory: WasmMemory } }).WebAssembly;
type WasmMemory = new (size: { initial: number; maximum: number; shared: true }) => { buffer: SharedArrayBuffer };

/**
 * SLOTS buffers of shared memory, filled in turn by one thread and hashed by one worker thread per role, so the
 * filling thread spends nothing on SHA-256. A slot is free again once every hasher and the caller's own hold on
 * it (a write of its bytes, say) are done. Memory: SLOTS × SLOT_BYTES plus the threads, whatever the data size.
 */
export class SlotHashers {
  private readonly memory = slotMemory();
  private readonly workers: Worker[];
  /** Per slot: holders (hashers, the caller's hold) still using it, and who waits for it to be free. */
  private readonly busy = new Array<number>(SLOTS).fill(0);
  private readonly freed = new Array<(() => void) | undefined>(SLOTS);
  private readonly digestWaiters: ((digests: string[]) => void)[] = [];
  private next = 0;
  private reject!: (err: Error) => void;
  /** The first failure (of a hashing thread or a hold), or the close: from then on nothing more is taken or sent. */
  private stopped: Error | undefined;
  /** Rejects with `stopped` when it is set; never unhandled. */
  readonly failure: Promise<never>;

  constructor(readonly roles: readonly HasherRole[]) {
    this.failure = new Promise<never>((_, reject) => (this.reject = reject));
    this.failure.catch(() => undefined);
    this.workers = roles.map((role, index) => {
      const worker = new Worker(HASHER, {
        eval: true,
        execArgv: [],
        workerData: { role, memory: this.memory, slots: slotRanges },
      });
      worker.on('message', (m: { slot?: number; digests?: string[] }) => {
        if (m.digests) return this.digestWaiters[index]?.(m.digests);
        this.release(m.slot!);
      });
      worker.on('error', this.fail);
      worker.on('exit', (code) => this.fail(new Error(`a hashing thread exited (code ${code})`)));
      return worker;
    });
  }

  /** The next slot to fill, once it is free, and its memory. */
  async take(): Promise<{ slot: number; view: Uint8Array }> {
    if (this.stopped) throw this.stopped;
    const slot = this.next;
    this.next = (slot + 1) % SLOTS;
    await this.whenFree(slot);
    return { slot, view: new Uint8Array(this.memory, slot * SLOT_BYTES, SLOT_BYTES) };
  }

  /** The [start, end) package ranges the `images` hasher digests; sent before the first slot reaching them. */
  setImages(ranges: [number, number][]): void {
    const index = this.roles.indexOf('images');
    if (index >= 0) this.workers[index]!.postMessage({ images: ranges });
  }

  /** Hands the slot's first `length` bytes, at data offset `at`, to the hashers; `hold` keeps it taken too. */
  submit(slot: number, at: number, length: number, hold?: Promise<void>): void {
    if (this.stopped) {
      hold?.catch(() => undefined);
      return;
    }
    this.busy[slot] = this.workers.length + (hold ? 1 : 0);
    for (const w of this.workers) w.postMessage({ slot, at, length });
    hold?.then(() => this.release(slot), this.fail);
  }

  /** Waits for every submitted slot to be hashed and released (holds included). */
  async drain(): Promise<void> {
    for (let slot = 0; slot < SLOTS; slot++) await this.whenFree(slot);
  }

  /** The digests, one list per role in `roles` order, once everything submitted is hashed. */
  async digests(): Promise<string[][]> {
    await this.drain();
    return Promise.all(
      this.workers.map((w, index) => {
        const digests = new Promise<string[]>((resolve) => (this.digestWaiters[index] = resolve));
        w.postMessage({ end: true });
        return Promise.race([digests, this.failure]);
      }),
    );
  }

  /** Stops the threads; safe at any point and more than once. Whoever still waits on a slot gets an error. */
  close(): void {
    this.fail(new Error('the hashing threads were stopped'));
    for (const w of this.workers) {
      w.removeAllListeners('exit');
      void w.terminate();
    }
  }

  private readonly fail = (err: Error): void => {
    if (this.stopped) return;
    this.stopped = err;
    this.reject(err);
  };

  /** Resolves once nothing holds `slot` (at once when nothing does); rejects with the first failure. */
  private async whenFree(slot: number): Promise<void> {
    if (this.busy[slot]! > 0)
      await Promise.race([new Promise<void>((resolve) => (this.freed[slot] = resolve)), this.failure]);
  }

  private release(slot: number): void {
    if (--this.busy[slot]! === 0) {
      const waiter = this.freed[slot];
      this.freed[slot] = undefined;
      waiter?.();
    }
  }
}

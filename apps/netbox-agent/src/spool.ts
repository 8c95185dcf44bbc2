import { createReadStream } from 'node:fs';
import { mkdtemp, open, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** What the spool needs of an object: its NetBox id and when NetBox last changed it. */
export interface Spooled {
  id: number;
  last_updated: string;
}

/**
 * One kind's objects as a pass read them from NetBox, kept on disk a page per line: a pass applies them in dependency
 * order after reading every kind side by side, and holding them all in memory cost 508 MiB of heap at 100,000
 * devices. What the pass needs of every object stays in memory: its id and the newest last_updated.
 */
export class KindSpool<T extends Spooled> {
  readonly ids: number[] = [];
  /** The highest last_updated of the objects added ('' when none). */
  watermark = '';
  private file: FileHandle | undefined;

  constructor(private readonly path: string) {}

  get count(): number {
    return this.ids.length;
  }

  async add(page: T[]): Promise<void> {
    if (!page.length) return;
    this.file ??= await open(this.path, 'wx');
    // JSON escapes line breaks inside strings, so a page is exactly one line.
    await this.file.write(`${JSON.stringify(page)}\n`);
    for (const o of page) {
      this.ids.push(o.id);
      if (o.last_updated > this.watermark) this.watermark = o.last_updated;
    }
  }

  /** The objects in the order they were added, in batches of up to `size` (each may be read any number of times). */
  async *batches(size: number): AsyncGenerator<T[]> {
    if (!this.file) return;
    const input = createReadStream(this.path);
    try {
      let batch: T[] = [];
      for await (const line of createInterface({ input, crlfDelay: Infinity })) {
        for (const o of JSON.parse(line) as T[]) {
          batch.push(o);
          if (batch.length === size) {
            yield batch;
            batch = [];
          }
        }
      }
      if (batch.length) yield batch;
    } finally {
      // A consumer that stops early (a failed apply) leaves the stream open otherwise.
      input.destroy();
    }
  }

  async close(): Promise<void> {
    await this.file?.close();
    this.file = undefined;
  }
}

/** A pass's spools, one per kind, in a directory of their own that close() removes. */
export class Spool<K extends string, T extends Spooled> {
  private readonly kinds = new Map<K, KindSpool<T>>();

  private constructor(private readonly dir: string) {}

  /** A fresh directory under `parent` (the OS temp directory when absent). */
  static async create<K extends string, T extends Spooled>(parent = tmpdir()): Promise<Spool<K, T>> {
    return new Spool(await mkdtemp(join(parent, 'fleet-netbox-pass-')));
  }

  kind(kind: K): KindSpool<T> {
    let spool = this.kinds.get(kind);
    if (!spool) this.kinds.set(kind, (spool = new KindSpool<T>(join(this.dir, `${kind}.ndjson`))));
    return spool;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.kinds.values()].map((k) => k.close()));
    await rm(this.dir, { recursive: true, force: true });
  }
}

import { mkdtemp, open, readdir, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What the spool needs of an object: its NetBox id and when NetBox last changed it. */
export interface Spooled {
  id: number;
  last_updated: string;
}

/** A spool file that could not be written or read back: names the file and the cause. */
export class SpoolError extends Error {
  constructor(path: string, what: string, cause: unknown) {
    // The cause's text is in the message, not chained: errorText would print it twice.
    super(`NetBox pass spool ${path}: ${what}: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'SpoolError';
  }
}

/**
 * One kind's objects as a pass read them from NetBox, kept on disk a page at a time: a pass applies them in dependency
 * order after reading every kind side by side, and holding them all in memory cost 508 MiB of heap at 100,000
 * devices. A page is read back by its offset and length, so a reader holds one page and its batch, whatever the
 * file's size. What the pass needs of every object stays in memory: its id and the newest last_updated.
 */
export class KindSpool<T extends Spooled> {
  readonly ids: number[] = [];
  /** The highest last_updated of the objects added ('' when none). */
  watermark = '';
  private file: FileHandle | undefined;
  private readonly pages: { offset: number; length: number }[] = [];
  private size = 0;

  constructor(private readonly path: string) {}

  get count(): number {
    return this.ids.length;
  }

  async add(page: T[]): Promise<void> {
    if (!page.length) return;
    const bytes = Buffer.from(JSON.stringify(page));
    try {
      this.file ??= await open(this.path, 'wx+');
      // A write may take fewer bytes than asked (a full disk): the rest follows, or the error names the file.
      for (let done = 0; done < bytes.length;)
        done += (await this.file.write(bytes, done, bytes.length - done, this.size + done)).bytesWritten;
    } catch (err) {
      throw new SpoolError(this.path, 'write', err);
    }
    this.pages.push({ offset: this.size, length: bytes.length });
    this.size += bytes.length;
    for (const o of page) {
      this.ids.push(o.id);
      if (o.last_updated > this.watermark) this.watermark = o.last_updated;
    }
  }

  /** Adds every page a NetBox list yields, one after another. */
  async addPages(pages: AsyncIterable<T[]>): Promise<void> {
    for await (const page of pages) await this.add(page);
  }

  /** The objects in the order they were added, in batches of up to `size` (each may be read any number of times). */
  async *batches(size: number): AsyncGenerator<T[]> {
    let batch: T[] = [];
    for (const page of this.pages) {
      for (const o of await this.read(page)) {
        batch.push(o);
        if (batch.length === size) {
          yield batch;
          batch = [];
        }
      }
    }
    if (batch.length) yield batch;
  }

  async close(): Promise<void> {
    const file = this.file;
    this.file = undefined;
    await file?.close();
  }

  private async read({ offset, length }: { offset: number; length: number }): Promise<T[]> {
    const buffer = Buffer.allocUnsafe(length);
    try {
      for (let done = 0; done < length;) {
        const { bytesRead } = await this.file!.read(buffer, done, length - done, offset + done);
        if (bytesRead === 0) throw new Error(`ends at ${offset + done} bytes, inside a page of ${length} at ${offset}`);
        done += bytesRead;
      }
      return JSON.parse(buffer.toString('utf8')) as T[];
    } catch (err) {
      throw new SpoolError(this.path, 'read', err);
    }
  }
}

const prefix = 'fleet-netbox-pass-';
/** A pass directory's name, with the pid of the process that made it. */
const passDirectory = new RegExp(`^${prefix}(\\d+)-`);

/** A pass's spools, one per kind, in a directory of its own (named after the process) that close() removes. */
export class Spool<K extends string, T extends Spooled> {
  private readonly kinds = new Map<K, KindSpool<T>>();

  private constructor(private readonly dir: string) {}

  /** A fresh directory under `parent` (the OS temp directory when absent). */
  static async create<K extends string, T extends Spooled>(parent = tmpdir()): Promise<Spool<K, T>> {
    try {
      return new Spool(await mkdtemp(join(parent, `${prefix}${process.pid}-`)));
    } catch (err) {
      throw new SpoolError(parent, 'create a pass directory', err);
    }
  }

  /**
   * Readies `parent` at start-up, before this process has a pass directory: removes those a process no longer running
   * left behind (killed in a pass; in a container the next one has the same pid, so its own count as left behind),
   * and makes and removes one, so that a directory that is missing or not writable stops the agent at once, named.
   * Another live agent's directories are left alone. Returns the names removed.
   */
  static async prepare(parent = tmpdir()): Promise<string[]> {
    const stale: string[] = [];
    try {
      for (const name of await readdir(parent)) {
        const pid = Number(passDirectory.exec(name)?.[1]);
        if (!pid || (pid !== process.pid && running(pid))) continue;
        await rm(join(parent, name), { recursive: true, force: true });
        stale.push(name);
      }
    } catch (err) {
      throw new SpoolError(parent, 'clear', err);
    }
    const probe = await Spool.create(parent);
    let failed: Error | undefined;
    try {
      await probe.kind('probe').add([{ id: 0, last_updated: '' }]);
    } finally {
      failed = await probe.close();
    }
    if (failed) throw failed;
    return stale;
  }

  kind(kind: K): KindSpool<T> {
    let spool = this.kinds.get(kind);
    if (!spool) this.kinds.set(kind, (spool = new KindSpool<T>(join(this.dir, `${kind}.json`))));
    return spool;
  }

  /** Closes the files and removes the directory; what failed is returned, not thrown, so it never hides the pass's
   * own outcome. */
  async close(): Promise<Error | undefined> {
    try {
      await Promise.allSettled([...this.kinds.values()].map((k) => k.close()));
      await rm(this.dir, { recursive: true, force: true });
      return undefined;
    } catch (err) {
      return new SpoolError(this.dir, 'remove', err);
    }
  }
}

/** Whether a process with this id runs (EPERM: it does, under another user). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

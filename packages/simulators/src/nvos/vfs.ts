import { createHash, type Hash } from 'node:crypto';
import { posix } from 'node:path';

/** Bytes of each file kept verbatim: enough for PEM material imported through NVUE, never a whole image. */
export const HEAD_BYTES = 64 * 1024;
/** Writes that arrive ahead of the hashed prefix are held until the gap fills; beyond this the write fails. */
const MAX_REORDER_BYTES = 64 * 1024 * 1024;

/**
 * One file of the switch's filesystem. Content is hashed as it streams in and only the
 * first HEAD_BYTES are kept, so a multi-gigabyte image costs a few kilobytes. SFTP clients
 * pipeline writes and may send them out of order; those are buffered until contiguous.
 */
export class VirtualFile {
  size = 0;
  /** SHA-256 (hex) of the content once it was written front to back without holes; undefined otherwise. */
  sha256: string | undefined;
  /** Times the file was opened for writing, and bytes received over all of them. */
  uploads = 0;
  bytesReceived = 0;
  mtimeMs = Date.now();
  private headBuf = Buffer.alloc(0);
  private hash: Hash | undefined = createHash('sha256');
  private hashed = 0;
  private readonly ahead = new Map<number, Buffer>();
  private aheadBytes = 0;

  /** Drops the content for a new upload; the counters stay. */
  truncate(): void {
    this.size = 0;
    this.sha256 = undefined;
    this.headBuf = Buffer.alloc(0);
    this.hash = createHash('sha256');
    this.hashed = 0;
    this.ahead.clear();
    this.aheadBytes = 0;
    this.mtimeMs = Date.now();
  }

  get head(): Buffer {
    return this.headBuf;
  }

  /** False when the write cannot be accepted (too far ahead of the contiguous prefix). */
  write(offset: number, data: Buffer): boolean {
    if (offset > this.hashed) {
      if (this.aheadBytes + data.length > MAX_REORDER_BYTES) return false;
      this.ahead.set(offset, Buffer.from(data));
      this.aheadBytes += data.length;
    } else if (offset === this.hashed && this.hash) {
      this.consume(data);
      this.drainAhead();
    } else {
      // Rewriting bytes already hashed: the digest no longer describes the content.
      this.hash = undefined;
    }
    this.keepHead(offset, data);
    this.size = Math.max(this.size, offset + data.length);
    this.bytesReceived += data.length;
    this.mtimeMs = Date.now();
    return true;
  }

  /** The writer closed the file: the digest is final if the content had no holes. */
  close(): void {
    if (this.hash && this.ahead.size === 0 && this.hashed === this.size) this.sha256 = this.hash.copy().digest('hex');
  }

  private consume(data: Buffer): void {
    this.hash!.update(data);
    this.hashed += data.length;
  }

  private drainAhead(): void {
    for (let next = this.ahead.get(this.hashed); next; next = this.ahead.get(this.hashed)) {
      this.ahead.delete(this.hashed);
      this.aheadBytes -= next.length;
      this.consume(next);
    }
  }

  private keepHead(offset: number, data: Buffer): void {
    if (offset >= HEAD_BYTES) return;
    const end = Math.min(HEAD_BYTES, offset + data.length);
    if (this.headBuf.length < end)
      this.headBuf = Buffer.concat([this.headBuf, Buffer.alloc(end - this.headBuf.length)]);
    data.copy(this.headBuf, offset, 0, end - offset);
  }
}

export interface VfsEntry {
  name: string;
  isDirectory: boolean;
  size: number;
  mtimeMs: number;
}

/** Folders where nothing but the preset tree may live. */
const PROTECTED = new Set(['/', '/host', '/home']);

/** The slice of an NVOS filesystem the control plane touches: image staging folders and home directories. */
export class VirtualFs {
  private readonly dirs = new Set(['/', '/host', '/host/nos-images', '/host/fw-images', '/home']);
  private readonly files = new Map<string, VirtualFile>();

  static normalise(path: string): string {
    const p = posix.normalize(path);
    return p.length > 1 ? p.replace(/\/+$/, '') : p;
  }

  addHome(user: string): string {
    const home = `/home/${user}`;
    this.dirs.add(home);
    return home;
  }

  isDirectory(path: string): boolean {
    return this.dirs.has(path);
  }

  file(path: string): VirtualFile | undefined {
    return this.files.get(path);
  }

  /** The file at `path` emptied for writing, created if its folder exists; undefined if it may not be written. */
  openForWrite(path: string): VirtualFile | undefined {
    const parent = posix.dirname(path);
    if (!this.dirs.has(parent) || PROTECTED.has(parent) || this.dirs.has(path)) return undefined;
    const file = this.files.get(path) ?? new VirtualFile();
    file.truncate();
    file.uploads++;
    this.files.set(path, file);
    return file;
  }

  /** Writes a whole buffer as one upload (fetched images, test fixtures). */
  put(path: string, data: Buffer): VirtualFile {
    const file = this.openForWrite(path);
    if (!file) throw new Error(`cannot write ${path}`);
    file.write(0, data);
    file.close();
    return file;
  }

  mkdir(path: string): boolean {
    const parent = posix.dirname(path);
    if (!this.dirs.has(parent) || PROTECTED.has(parent) || this.dirs.has(path) || this.files.has(path)) return false;
    this.dirs.add(path);
    return true;
  }

  remove(path: string): boolean {
    return this.files.delete(path);
  }

  stat(path: string): VfsEntry | undefined {
    const name = posix.basename(path) || '/';
    if (this.dirs.has(path)) return { name, isDirectory: true, size: 0, mtimeMs: 0 };
    const f = this.files.get(path);
    return f && { name, isDirectory: false, size: f.size, mtimeMs: f.mtimeMs };
  }

  /** Entries directly inside `dir`, or undefined if it is not a folder. */
  list(dir: string): VfsEntry[] | undefined {
    if (!this.dirs.has(dir)) return undefined;
    const inside = (p: string) => p !== dir && posix.dirname(p) === dir;
    return [...[...this.dirs].filter(inside), ...[...this.files.keys()].filter(inside)]
      .sort()
      .map((p) => this.stat(p)!);
  }

  /** Every file at or below `dir`, with its path. */
  filesUnder(dir: string): [string, VirtualFile][] {
    return [...this.files].filter(([p]) => p.startsWith(`${dir}/`)).sort(([a], [b]) => a.localeCompare(b));
  }
}

import ssh2, { type Attributes, type SFTPWrapper } from 'ssh2';
import type { SimulatedSwitch } from './switch.js';
import { HEAD_BYTES, VirtualFs, type VfsEntry, type VirtualFile } from './vfs.js';

const { OPEN_MODE, STATUS_CODE } = ssh2.utils.sftp;

type Handle =
  | { kind: 'file'; path: string; file: VirtualFile; writable: boolean; received: number }
  | { kind: 'dir'; path: string; listed: boolean };

/**
 * The SFTP subsystem of one session, over the switch's VirtualFs. Uploads are hashed as they
 * arrive; reads return content only for small files (the simulator keeps no more). The
 * `sftpStallAfterBytes` fault holds write replies past that many bytes of a file until the
 * fault is cleared or the client gives up, which is what a stalled transfer looks like.
 */
export function serveSftp(sw: SimulatedSwitch, user: string, sftp: SFTPWrapper): void {
  const home = `/home/${user}`;
  const handles = new Map<number, Handle>();
  let nextHandle = 0;
  const held: (() => void)[] = [];
  let closed = false;
  const gone = new Promise<void>((resolve) => sftp.once('close', () => resolve()));
  void gone.then(() => {
    closed = true;
    held.length = 0;
  });

  // The client's EOF ends the subsystem; closing our side lets it exit.
  sftp.once('end', () => sftp.end());

  const resolve = (p: string) => VirtualFs.normalise(p.startsWith('/') ? p : `${home}/${p}`);
  const open = (h: Handle) => {
    const id = nextHandle++;
    handles.set(id, h);
    const b = Buffer.alloc(4);
    b.writeUInt32BE(id);
    return b;
  };
  const handleOf = (b: Buffer) => (b.length === 4 ? handles.get(b.readUInt32BE(0)) : undefined);
  const log = (op: string, path: string, ok: boolean, extra: { bytes?: number; detail?: string } = {}) =>
    sw.recordSsh({ op: `sftp-${op}`, user, path, ok, ...extra });

  const releaseWhenCleared = async () => {
    while (held.length > 0 && !closed) {
      await sw.faultsChanged(gone);
      if (sw.faults.sftpStallAfterBytes === undefined) for (const reply of held.splice(0)) reply();
    }
  };

  sftp.on('OPEN', (reqid, filename, flags) => {
    const path = resolve(filename);
    if (flags & OPEN_MODE.WRITE) {
      const file = sw.fs.openForWrite(path);
      log('open', path, file !== undefined);
      if (!file) return sftp.status(reqid, STATUS_CODE.PERMISSION_DENIED, `cannot write ${path}`);
      return sftp.handle(reqid, open({ kind: 'file', path, file, writable: true, received: 0 }));
    }
    const file = sw.fs.file(path);
    if (!file) return sftp.status(reqid, STATUS_CODE.NO_SUCH_FILE, `${path} does not exist`);
    sftp.handle(reqid, open({ kind: 'file', path, file, writable: false, received: 0 }));
  });

  sftp.on('WRITE', (reqid, handle, offset, data) => {
    const h = handleOf(handle);
    if (h?.kind !== 'file' || !h.writable) return sftp.status(reqid, STATUS_CODE.FAILURE, 'not open for writing');
    h.received += data.length;
    // A write held past a stall is dropped with its session: a dead client's bytes never land.
    const reply = () => {
      if (!closed) sftp.status(reqid, h.file.write(offset, data) ? STATUS_CODE.OK : STATUS_CODE.FAILURE);
    };
    const limit = sw.faults.sftpStallAfterBytes;
    if (limit === undefined || h.received <= limit) return reply();
    held.push(reply);
    if (held.length === 1) void releaseWhenCleared();
  });

  sftp.on('READ', (reqid, handle, offset, length) => {
    const h = handleOf(handle);
    if (h?.kind !== 'file') return sftp.status(reqid, STATUS_CODE.FAILURE, 'not a file handle');
    if (offset >= h.file.size) return sftp.status(reqid, STATUS_CODE.EOF);
    if (h.file.size > HEAD_BYTES)
      return sftp.status(
        reqid,
        STATUS_CODE.OP_UNSUPPORTED,
        'the simulator keeps only the size and hash of large files',
      );
    sftp.data(reqid, h.file.head.subarray(offset, Math.min(h.file.size, offset + length)));
  });

  sftp.on('CLOSE', (reqid, handle) => {
    const h = handleOf(handle);
    if (!h) return sftp.status(reqid, STATUS_CODE.FAILURE, 'no such handle');
    handles.delete(handle.readUInt32BE(0));
    if (h.kind === 'file' && h.writable) {
      h.file.close();
      log('close', h.path, true, { bytes: h.received });
    }
    sftp.status(reqid, STATUS_CODE.OK);
  });

  sftp.on('FSTAT', (reqid, handle) => {
    const h = handleOf(handle);
    const entry = h && sw.fs.stat(h.path);
    if (!entry) return sftp.status(reqid, STATUS_CODE.FAILURE, 'no such handle');
    sftp.attrs(reqid, attrs(entry));
  });

  const stat = (reqid: number, p: string) => {
    const path = resolve(p);
    const entry = sw.fs.stat(path);
    log('stat', path, entry !== undefined);
    if (!entry) return sftp.status(reqid, STATUS_CODE.NO_SUCH_FILE, `${path} does not exist`);
    sftp.attrs(reqid, attrs(entry));
  };
  sftp.on('STAT', stat);
  sftp.on('LSTAT', stat);

  sftp.on('OPENDIR', (reqid, p) => {
    const path = resolve(p);
    const isDir = sw.fs.isDirectory(path);
    log('opendir', path, isDir);
    if (!isDir) return sftp.status(reqid, STATUS_CODE.NO_SUCH_FILE, `${path} is not a directory`);
    sftp.handle(reqid, open({ kind: 'dir', path, listed: false }));
  });

  sftp.on('READDIR', (reqid, handle) => {
    const h = handleOf(handle);
    if (h?.kind !== 'dir') return sftp.status(reqid, STATUS_CODE.FAILURE, 'not a directory handle');
    if (h.listed) return sftp.status(reqid, STATUS_CODE.EOF);
    h.listed = true;
    sftp.name(
      reqid,
      (sw.fs.list(h.path) ?? []).map((e) => ({ filename: e.name, longname: longname(e), attrs: attrs(e) })),
    );
  });

  sftp.on('REALPATH', (reqid, p) => {
    const path = resolve(p);
    sftp.name(reqid, [{ filename: path, longname: path, attrs: {} as Attributes }]);
  });

  sftp.on('MKDIR', (reqid, p) => {
    const path = resolve(p);
    const ok = sw.fs.mkdir(path);
    log('mkdir', path, ok);
    sftp.status(reqid, ok ? STATUS_CODE.OK : STATUS_CODE.FAILURE, ok ? undefined : `cannot create ${path}`);
  });

  sftp.on('REMOVE', (reqid, p) => {
    const path = resolve(p);
    const ok = sw.fs.remove(path);
    log('remove', path, ok);
    sftp.status(reqid, ok ? STATUS_CODE.OK : STATUS_CODE.NO_SUCH_FILE);
  });

  // Permissions and times are not modelled; accepting them keeps clients that set modes working.
  sftp.on('SETSTAT', (reqid) => sftp.status(reqid, STATUS_CODE.OK));
  sftp.on('FSETSTAT', (reqid) => sftp.status(reqid, STATUS_CODE.OK));
  sftp.on('RENAME', (reqid) => sftp.status(reqid, STATUS_CODE.OP_UNSUPPORTED));
  sftp.on('RMDIR', (reqid) => sftp.status(reqid, STATUS_CODE.OP_UNSUPPORTED));
}

function attrs(e: VfsEntry): Attributes {
  const t = Math.floor(e.mtimeMs / 1000);
  return { mode: e.isDirectory ? 0o040755 : 0o100644, uid: 0, gid: 0, size: e.size, atime: t, mtime: t };
}

function longname(e: VfsEntry): string {
  const mode = e.isDirectory ? 'drwxr-xr-x' : '-rw-r--r--';
  const date = new Date(e.mtimeMs).toISOString().slice(0, 10);
  return `${mode} 1 root root ${e.size} ${date} ${e.name}`;
}

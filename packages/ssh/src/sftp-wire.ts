import type { Duplex } from 'node:stream';

/** SFTP v3 (draft-ietf-secsh-filexfer-02) message types and flags used to stream a file in. */
const FXP_INIT = 1;
const FXP_VERSION = 2;
const FXP_OPEN = 3;
const FXP_CLOSE = 4;
const FXP_WRITE = 6;
const FXP_STAT = 17;
const FXP_STATUS = 101;
const FXP_HANDLE = 102;
const FXP_ATTRS = 105;
const FXP_EXTENDED = 200;
const FXP_EXTENDED_REPLY = 201;
const FXF_WRITE_CREAT_TRUNC = 0x02 | 0x08 | 0x10;
const FILEXFER_ATTR_SIZE = 0x01;
const FX_OK = 0;
const FX_NO_SUCH_FILE = 2;

const LIMITS = 'limits@openssh.com';
/** What every server must take (34,000-byte messages), less room for any header. */
const SAFE_MAX_WRITE = 32 * 1024;
/** Bytes of a WRITE request before its handle: length, type, id, handle length. */
const WRITE_HEAD = 4 + 1 + 4 + 4;
const EMPTY = Buffer.alloc(0);
const STATUS_NAMES: Record<number, string> = {
  1: 'end of file',
  2: 'no such file',
  3: 'permission denied',
  4: 'failure',
  5: 'bad message',
  6: 'no connection',
  7: 'connection lost',
  8: 'operation unsupported',
};

/** A status other than OK, as the server gave it (`code` is SSH_FX_*). */
export class SftpStatusError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'SftpStatusError';
  }
}

/** An answer to a request (its type and the body after the id), or why none will come. */
type Reply = (err: Error | undefined, type: number, body: Buffer) => void;

/**
 * The client side of one SFTP subsystem channel, only as far as streaming a file into the
 * switch needs: INIT, STAT, OPEN for writing, pipelined WRITEs and CLOSE. ssh2's SFTP client copies
 * each write into a packet of its own; here the caller builds WRITE requests in buffers it
 * reuses (see `writeHeaderBytes`, `sendWrite`), with the data read from disk straight into
 * them, so an upload allocates nothing per write but ssh2's SSH packets.
 */
export class SftpWriter {
  /** Largest data length per WRITE the server takes. */
  maxWrite = SAFE_MAX_WRITE;
  private nextId = 0;
  private readonly replies = new Map<number, Reply>();
  private inbox: Buffer | undefined;
  private failure: Error | undefined;
  /** Who waits for VERSION, the one answer without an id. */
  private onVersion: Reply | undefined;

  private constructor(private readonly channel: Duplex) {
    channel.on('data', (chunk: Buffer) => this.receive(chunk));
    channel.on('error', (err: Error) => this.fail(err));
    channel.on('close', () => this.fail(new Error('the SFTP channel closed')));
  }

  /**
   * Starts the SFTP session on `channel`. The largest write is what the server states through
   * OpenSSH's limits extension, else what every server must take.
   */
  static async start(channel: Duplex): Promise<SftpWriter> {
    const w = new SftpWriter(channel);
    const extensions = await new Promise<Map<string, string>>((resolve, reject) => {
      w.onVersion = (err, _type, body) => (err ? reject(err) : resolve(readExtensions(body)));
      channel.write(message(FXP_INIT, [uint32(3)]));
    });
    if (extensions.get(LIMITS) === '1') {
      const limits = await w.request(FXP_EXTENDED, [str(LIMITS)], FXP_EXTENDED_REPLY);
      // max-packet-length, max-read-length, max-write-length, max-open-handles; 0 means no limit stated.
      const maxWrite = Number(limits.readBigUInt64BE(16));
      if (maxWrite > 0) w.maxWrite = maxWrite;
    }
    return w;
  }

  /** Size of the file at `path`, or undefined when there is none. */
  async size(path: string): Promise<number | undefined> {
    let attrs: Buffer;
    try {
      attrs = await this.request(FXP_STAT, [str(path)], FXP_ATTRS);
    } catch (err) {
      if (err instanceof SftpStatusError && err.code === FX_NO_SUCH_FILE) return undefined;
      throw err;
    }
    if (!(attrs.readUInt32BE(0) & FILEXFER_ATTR_SIZE)) throw new Error(`the server gave no size for ${path}`);
    return Number(attrs.readBigUInt64BE(4));
  }

  /** Opens `path` for writing, created or emptied; resolves to the handle. */
  async open(path: string): Promise<Buffer> {
    const body = await this.request(FXP_OPEN, [str(path), uint32(FXF_WRITE_CREAT_TRUNC), uint32(0)], FXP_HANDLE);
    return Buffer.from(body.subarray(4, 4 + body.readUInt32BE(0)));
  }

  async close(handle: Buffer): Promise<void> {
    await this.request(FXP_CLOSE, [str(handle)]);
  }

  /** Bytes before the data in a WRITE request for `handle`. */
  static writeHeaderBytes(handle: Buffer): number {
    return WRITE_HEAD + handle.length + 8 + 4;
  }

  /**
   * Sends a WRITE whose data (`length` bytes) the caller already put at `writeHeaderBytes`
   * into `packet`; this fills in the header. `sent` runs once the channel has taken the bytes
   * (the buffer may be reused), `done` once the server answered.
   */
  sendWrite(
    packet: Buffer,
    handle: Buffer,
    offset: number,
    length: number,
    sent: () => void,
    done: (err?: Error) => void,
  ): void {
    if (this.failure) return done(this.failure);
    const id = this.id();
    const head = SftpWriter.writeHeaderBytes(handle);
    packet.writeUInt32BE(head - 4 + length, 0);
    packet[4] = FXP_WRITE;
    packet.writeUInt32BE(id, 5);
    packet.writeUInt32BE(handle.length, 9);
    handle.copy(packet, 13);
    packet.writeBigUInt64BE(BigInt(offset), 13 + handle.length);
    packet.writeUInt32BE(length, head - 4);
    this.replies.set(id, (err, type, body) =>
      done(err ?? (type === FXP_STATUS ? statusError(body) : unexpected(type))),
    );
    this.channel.write(packet.subarray(0, head + length), sent);
  }

  /** Ends the channel (the server's sftp-server exits). */
  end(): void {
    this.channel.end();
  }

  private request(type: number, fields: Buffer[], want = FXP_STATUS): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      if (this.failure) return reject(this.failure);
      const id = this.id();
      this.replies.set(id, (err, got, body) => {
        if (err) return reject(err);
        if (got === want) return resolve(body);
        reject((got === FXP_STATUS && statusError(body)) || unexpected(got));
      });
      this.channel.write(message(type, [uint32(id), ...fields]));
    });
  }

  private id(): number {
    const id = this.nextId;
    this.nextId = (this.nextId + 1) >>> 0;
    return id;
  }

  /** Splits channel data into SFTP messages and hands each to whoever waits for its id. */
  private receive(chunk: Buffer): void {
    let data = this.inbox ? Buffer.concat([this.inbox, chunk]) : chunk;
    while (data.length >= 5) {
      const end = 4 + data.readUInt32BE(0);
      if (data.length < end) break;
      const type = data[4]!;
      const body = data.subarray(5, end);
      data = data.subarray(end);
      if (type === FXP_VERSION) {
        const waiting = this.onVersion;
        this.onVersion = undefined;
        waiting?.(undefined, type, body);
      } else if (body.length < 4) {
        // Every other reply starts with its request's id: a server sending less cannot be talked to.
        this.fail(new Error(`malformed SFTP reply of type ${type}`));
        this.channel.destroy();
        return;
      } else {
        const id = body.readUInt32BE(0);
        const reply = this.replies.get(id);
        this.replies.delete(id);
        reply?.(undefined, type, body.subarray(4));
      }
    }
    this.inbox = data.length > 0 ? Buffer.from(data) : undefined;
  }

  /** The channel is gone: every request still waiting fails, and so will later ones. */
  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    const waiting = [...this.replies.values(), ...(this.onVersion ? [this.onVersion] : [])];
    this.replies.clear();
    this.onVersion = undefined;
    for (const reply of waiting) reply(err, 0, EMPTY);
  }
}

function statusError(body: Buffer): SftpStatusError | undefined {
  const code = body.length >= 4 ? body.readUInt32BE(0) : 4;
  if (code === FX_OK) return undefined;
  const text = body.length >= 8 ? body.toString('utf8', 8, 8 + body.readUInt32BE(4)) : '';
  return new SftpStatusError(code, text || STATUS_NAMES[code] || `SFTP status ${code}`);
}

function unexpected(type: number): Error {
  return new Error(`unexpected SFTP reply type ${type}`);
}

function readExtensions(body: Buffer): Map<string, string> {
  const out = new Map<string, string>();
  for (let p = 4; p + 4 <= body.length;) {
    const nameLen = body.readUInt32BE(p);
    const name = body.toString('utf8', p + 4, p + 4 + nameLen);
    p += 4 + nameLen;
    if (p + 4 > body.length) break;
    const dataLen = body.readUInt32BE(p);
    out.set(name, body.toString('utf8', p + 4, p + 4 + dataLen));
    p += 4 + dataLen;
  }
  return out;
}

function message(type: number, fields: Buffer[]): Buffer {
  const length = 1 + fields.reduce((n, f) => n + f.length, 0);
  return Buffer.concat([uint32(length), Buffer.from([type]), ...fields]);
}

function uint32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

function str(s: string | Buffer): Buffer {
  const b = typeof s === 'string' ? Buffer.from(s, 'utf8') : s;
  return Buffer.concat([uint32(b.length), b]);
}

import { connect, createServer, type Server, type Socket } from 'node:net';

interface Pair {
  client: Socket;
  upstream: Socket | undefined;
}

/**
 * A TCP link a test can cut: the satellite reaches Temporal through it. A cut behaves like a partition, not like a
 * refused connection: bytes stop flowing both ways on open connections and new connections are accepted but go
 * nowhere, so the gRPC client sees silence (its keepalive and deadlines decide what happens), as it would when a
 * site's uplink drops packets. Restoring lets everything held flow again, as TCP does after a partition shorter than
 * its retransmission timeout.
 */
export class LinkProxy {
  private readonly pairs = new Set<Pair>();
  private cutSince: number | undefined;
  /** Every cut so far, as [start, end] in ms since the epoch (end undefined while cut). */
  readonly cuts: [number, number | undefined][] = [];

  private constructor(
    private readonly server: Server,
    private readonly target: { host: string; port: number },
  ) {}

  static async start(targetAddress: string): Promise<LinkProxy> {
    const [host, port] = splitAddress(targetAddress);
    const server = createServer();
    const proxy = new LinkProxy(server, { host, port });
    server.on('connection', (client) => proxy.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    return proxy;
  }

  /** host:port the satellite connects to instead of Temporal. */
  get address(): string {
    const a = this.server.address();
    if (!a || typeof a === 'string') throw new Error('link proxy not listening');
    return `127.0.0.1:${a.port}`;
  }

  get isCut(): boolean {
    return this.cutSince !== undefined;
  }

  cut(): void {
    if (this.isCut) return;
    this.cutSince = Date.now();
    this.cuts.push([this.cutSince, undefined]);
    for (const p of this.pairs) {
      p.client.pause();
      p.upstream?.pause();
    }
  }

  restore(): void {
    if (!this.isCut) return;
    this.cutSince = undefined;
    this.cuts[this.cuts.length - 1]![1] = Date.now();
    for (const p of this.pairs) {
      if (!p.upstream) this.connectUpstream(p);
      p.client.resume();
      p.upstream?.resume();
    }
  }

  async stop(): Promise<void> {
    for (const p of this.pairs) {
      p.client.destroy();
      p.upstream?.destroy();
    }
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    const pair: Pair = { client, upstream: undefined };
    this.pairs.add(pair);
    const drop = () => {
      this.pairs.delete(pair);
      client.destroy();
      pair.upstream?.destroy();
    };
    client.on('error', drop);
    client.on('close', drop);
    if (this.isCut) client.pause();
    else this.connectUpstream(pair);
  }

  private connectUpstream(pair: Pair): void {
    const upstream = connect(this.target.port, this.target.host);
    pair.upstream = upstream;
    const drop = () => {
      this.pairs.delete(pair);
      upstream.destroy();
      pair.client.destroy();
    };
    upstream.on('error', drop);
    upstream.on('close', drop);
    // Plain 'data' forwarding rather than pipe(): pipe() resumes a paused source when its destination drains,
    // which would let bytes through a cut.
    pair.client.on('data', (chunk) => upstream.write(chunk));
    upstream.on('data', (chunk) => pair.client.write(chunk));
  }
}

function splitAddress(address: string): [string, number] {
  const i = address.lastIndexOf(':');
  return [address.slice(0, i), Number(address.slice(i + 1))];
}

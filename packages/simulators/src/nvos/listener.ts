import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * One TCP port of a simulated switch. Accepted sockets go to `accept` (an HTTP, HTTPS or SSH
 * server). Going down closes the port, so connections are refused as on a rebooting switch,
 * and drops the connections that are open.
 */
export class Endpoint {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private transitions: Promise<void> = Promise.resolve();

  constructor(
    readonly host: string,
    /** 0 until first opened picks a free port; that port is kept for later re-opens. */
    public port: number,
    private readonly accept: (socket: Socket) => void,
  ) {}

  /** Brings the port up or down; calls take effect in order. */
  set(up: boolean): Promise<void> {
    const next = this.transitions.then(() => (up ? this.open() : this.shut()));
    this.transitions = next.catch(() => undefined);
    return next;
  }

  /** Drops open connections but keeps listening (a server restarting with new settings). */
  dropConnections(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  private async open(): Promise<void> {
    if (this.server) return;
    const server = createServer((socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
      // A client that vanishes mid-request is its own problem, not the simulator's.
      socket.on('error', () => undefined);
      socket.setNoDelay(true);
      this.accept(socket);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: this.host, port: this.port, backlog: 64 }, resolve);
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  private async shut(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const closed = new Promise((resolve) => server.close(resolve));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }
}

import type { Socket } from 'node:net';
import { createSecureContext, TLSSocket } from 'node:tls';

/** The TCP connection under each TLS one: an RST goes to TCP (a TLS socket's handle cannot send one). */
const tcpOf = new WeakMap<Socket, Socket>();

/** A BMC's certificate and key (PEM). */
export interface BmcCertificate {
  certPem: string;
  keyPem: string;
}

/** TLS on an accepted connection with the BMC's own certificate, as each real BMC presents its own. */
export function serveTls(tcp: Socket, certificate: ReturnType<typeof createSecureContext>): TLSSocket {
  const tls = new TLSSocket(tcp, { isServer: true, secureContext: certificate });
  tcpOf.set(tls, tcp);
  // A client that gives up mid-handshake (a refused certificate) must not take the simulator down.
  tls.on('error', () => tls.destroy());
  return tls;
}

export const secureContext = (c: BmcCertificate) =>
  createSecureContext({ cert: c.certPem, key: c.keyPem, minVersion: 'TLSv1.2' });

/** Drops the connection with an RST, not a FIN, so the client learns at once that nobody will answer. */
export function resetConnection(socket: Socket): void {
  const tcp = tcpOf.get(socket);
  if (!tcp) return void socket.resetAndDestroy();
  tcp.resetAndDestroy();
  socket.destroy();
}

import type { Socket } from 'node:net';

/**
 * ssh2 writes every SSH packet to the socket on its own, so a 128 KiB SFTP write (four 32 KiB
 * channel packets and their framing) costs several syscalls. Corking until the event loop turns
 * sends what one round of work produced in one write.
 */
export function coalesceWrites(socket: Socket): void {
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  let corked = false;
  const uncork = () => {
    corked = false;
    socket.uncork();
  };
  socket.write = ((...args: unknown[]) => {
    if (!corked) {
      corked = true;
      socket.cork();
      setImmediate(uncork);
    }
    return write(...args);
  }) as typeof socket.write;
}

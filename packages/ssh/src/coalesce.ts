import type { Socket } from 'node:net';

/** Bytes held back at most: past this a burst starts on its way while the rest is still being encrypted. */
const FLUSH_BYTES = 256 * 1024;

/**
 * ssh2 writes every SSH packet to the socket on its own, so a burst of SFTP writes (32 KiB
 * packets) would cost a syscall per packet. Corking until the event loop turns, or until
 * FLUSH_BYTES are waiting, sends them in a few writes. The limit matters when the switch opens
 * the window by a megabyte at once: the first packets then reach it while we encrypt the rest.
 */
export function coalesceWrites(socket: Socket): void {
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  let corked = false;
  let pending = 0;
  const uncork = () => {
    if (!corked) return;
    corked = false;
    pending = 0;
    socket.uncork();
  };
  socket.write = ((...args: unknown[]) => {
    if (!corked) {
      corked = true;
      socket.cork();
      setImmediate(uncork);
    }
    const flowing = write(...args);
    pending += (args[0] as { length: number }).length;
    if (pending >= FLUSH_BYTES) uncork();
    return flowing;
  }) as typeof socket.write;
}

import type { DirectOpener } from '@fleet/fwpkg';

/**
 * A disk whose direct handle refuses every write with EINVAL, as a device wanting another alignment does: `open` for
 * the store under test, the file offsets it was asked to write at (`refusals`), and the error it threw.
 */
export function refusingDisk() {
  const refusals: number[] = [];
  const error = Object.assign(new Error('EINVAL: invalid argument, write'), { code: 'EINVAL' });
  const open: DirectOpener = async () => ({
    write: async (_buffer, _offset, _length, position) => {
      refusals.push(position);
      throw error;
    },
    close: async () => undefined,
  });
  return { open, refusals, error };
}

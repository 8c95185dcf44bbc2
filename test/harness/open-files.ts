import { readdirSync, readlinkSync, realpathSync } from 'node:fs';

/** Files under `dir` this process has open (a deleted one as "<path> (deleted)"): for tests that check for leaks. */
export function openFilesUnder(dir: string): string[] {
  const targets = readdirSync('/proc/self/fd').map((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      return ''; // closed while listing
    }
  });
  const under = `${realpathSync(dir)}/`; // links name the file by its real path
  return targets.filter((t) => t.startsWith(under));
}

import { readdirSync, readlinkSync, realpathSync } from 'node:fs';

/** This process's open descriptors and what each names (a deleted file as "<path> (deleted)"). */
export function openDescriptors(): { fd: string; target: string }[] {
  return readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      return [{ fd, target: readlinkSync(`/proc/self/fd/${fd}`) }];
    } catch {
      return []; // closed while listing
    }
  });
}

/** Files under `dir` this process has open: for tests that check for leaks. */
export function openFilesUnder(dir: string): string[] {
  const under = `${realpathSync(dir)}/`; // links name the file by its real path
  return openDescriptors()
    .map((d) => d.target)
    .filter((t) => t.startsWith(under));
}

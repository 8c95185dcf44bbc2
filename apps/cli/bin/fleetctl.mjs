#!/usr/bin/env node
/* global URL */
// fleetctl: the operators' command line. Runs the bundle the install step builds (scripts/build.mjs) when it is newer
// than every source file, else the TypeScript sources through tsx (a checkout being edited).
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const bundle = join(root, 'dist/fleetctl.mjs');

function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

let bundleTime = 0;
try {
  bundleTime = statSync(bundle).mtimeMs;
} catch {
  // not built: run the sources
}
if (bundleTime > newestSource(join(root, 'src'))) {
  await import(bundle);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/main.ts');
}

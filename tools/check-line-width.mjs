#!/usr/bin/env node
// Fails when a tracked .ts/.tsx/.mjs/.js line is wider than Prettier's print width (120): Prettier leaves long strings,
// template literals and comments as they are, so this catches what `pnpm format:check` cannot.
// Generated or vendored folders listed in .prettierignore are skipped.
//
// Usage: node tools/check-line-width.mjs

/* global process, console */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const MAX = 120;
const ignored = readFileSync('.prettierignore', 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#') && l.endsWith('/'));
const inIgnored = (path) => ignored.some((dir) => path.startsWith(dir) || path.includes(`/${dir}`));

const files = execFileSync('git', ['ls-files', '-z', '--', '*.ts', '*.tsx', '*.mjs', '*.js'], { encoding: 'utf8' })
  .split('\0')
  .filter((f) => f && !inIgnored(f));

let offending = 0;
for (const file of files) {
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (line.length > MAX) {
        console.log(`${file}:${i + 1}: ${line.length} characters (at most ${MAX})`);
        offending++;
      }
    });
}
if (offending) {
  console.error(`${offending} line(s) wider than ${MAX} characters`);
  process.exit(1);
}

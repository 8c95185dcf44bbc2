#!/usr/bin/env node
// Prints one field of the first item of a Fleet list answer read from stdin, for shell one-liners:
//   DEV=$(curl -s "$HUB/v1/devices?role=compute-tray&limit=1" -H "Authorization: Bearer $T" \
//     | node tools/pick.mjs id "a compute tray")
// When nothing matches, or the hub answered an error or not JSON, it says so on stderr and what to check,
// and exits 1 (so `set -e` scripts stop there, and $DEV is never a stack trace).
//
// Usage: node tools/pick.mjs FIELD WHAT [KEY=VALUE ...]
//   FIELD      the field to print (e.g. id)
//   WHAT       what was asked for, in words, for the messages
//   KEY=VALUE  only items whose KEY is VALUE (e.g. format=nvos)
/* global process, console, URL */
import { readFileSync } from 'node:fs';

const [field, what, ...where] = process.argv.slice(2);
if (!field || field === '--help' || field === '-h' || !what) {
  const usage = readFileSync(new URL(import.meta.url), 'utf8')
    .split('\n')
    .slice(1)
    .filter((l) => l.startsWith('//'))
    .map((l) => l.replace(/^\/\/ ?/, ''));
  (field === '--help' || field === '-h' ? console.log : console.error)(usage.join('\n'));
  process.exit(field === '--help' || field === '-h' ? 0 : 2);
}
const fail = (message) => {
  console.error(`pick: ${message}`);
  process.exit(1);
};
const input = readFileSync(0, 'utf8');
if (input.trim() === '')
  fail(`no answer while asking for ${what}: is the hub up? Start the stack with: bash tools/up.sh`);
let body;
try {
  body = JSON.parse(input);
} catch {
  fail(`the answer while asking for ${what} is not JSON (is that the hub's URL?): ${input.slice(0, 200)}`);
}
if (body && typeof body === 'object' && body.error) {
  const { code, message } = body.error;
  const hint = code === 'UNAUTHENTICATED' ? ' (take a token from .run/dev/tokens.json)' : '';
  fail(`the hub refused the request for ${what}: ${code}: ${message}${hint}`);
}
if (!body || !Array.isArray(body.items))
  fail(`the answer while asking for ${what} is not a list: ${input.slice(0, 200)}`);
const conditions = where.map((w) => w.split('='));
const match = body.items.find((item) => conditions.every(([k, v]) => String(item[k]) === v));
if (!match) {
  const filter = where.length ? ` with ${where.join(', ')}` : '';
  fail(
    `no ${what}${filter}: the list is empty. Check the filter (site id, role), that the stack is up (bash ` +
      `tools/up.sh) ` +
      'and that the NetBox agent has synced (.run/dev/netbox-agent.log shows "netbox sync done").',
  );
}
if (match[field] === undefined)
  fail(`the first ${what} has no field "${field}" (fields: ${Object.keys(match).join(', ')})`);
console.log(typeof match[field] === 'string' ? match[field] : JSON.stringify(match[field]));

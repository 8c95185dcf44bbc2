import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { buildFwpkg, FwpkgError, inspectFwpkg, parseFwpkgHeader, REVISIONS, type FwpkgRevision } from '../src/index.js';
import { chunked, reseal, sampleSpec, vectors } from './helpers.js';

// Mutated packages must come back parsed or as a FwpkgError that says where: never a RangeError,
// a TypeError or a hang. Seeded, so a failure names the seed and mutation that reproduce it.
const SEED = 0x5eed_f00d;
const MUTATIONS_PER_PACKAGE = 500;

/** mulberry32: small, fast and good enough to pick bytes. */
function prng(seed: number): (n: number) => number {
  let s = seed;
  return (n) => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

const bases: [string, Buffer][] = [
  ...(Object.keys(REVISIONS) as FwpkgRevision[]).map((r): [string, Buffer] => [
    `built ${r}`,
    buildFwpkg(sampleSpec(r)),
  ]),
  ['pkg-1.0.0', readFileSync(join(vectors, 'pkg-1.0.0.fwpkg'))],
  ['pkg-1.3.0', readFileSync(join(vectors, 'pkg-1.3.0.fwpkg'))],
];

/** One random mutation, mostly aimed at the header where the parsing is. */
function mutate(pkg: Buffer, rand: (n: number) => number): { bytes: Buffer; how: string } {
  const size = pkg.readUInt16LE(17);
  const where = () => (rand(10) < 8 ? rand(size) : rand(pkg.length));
  const bytes = Buffer.from(pkg);
  switch (rand(4)) {
    case 0: {
      const at = where();
      bytes[at]! ^= 1 + rand(255);
      return { bytes, how: `flip byte ${at}` };
    }
    case 1: {
      const length = rand(pkg.length);
      return { bytes: bytes.subarray(0, length), how: `truncate to ${length}` };
    }
    case 2: {
      const at = where();
      const extra = Buffer.from(Array.from({ length: 1 + rand(8) }, () => rand(256)));
      return {
        bytes: Buffer.concat([bytes.subarray(0, at), extra, bytes.subarray(at)]),
        how: `insert ${extra.length} at ${at}`,
      };
    }
    default: {
      // A count or length field grows or shrinks: read the byte pair there as a u16.
      const at = Math.min(where(), size - 2);
      const delta = [-256, -2, -1, 1, 2, 3, 16, 256, 0x7fff][rand(9)]!;
      bytes.writeUInt16LE((bytes.readUInt16LE(at) + delta) & 0xffff, at);
      return { bytes, how: `bump u16 at ${at} by ${delta}` };
    }
  }
}

/** Half the mutants get a valid header checksum again, so parsing goes past the checksum check. */
function maybeReseal(m: Buffer, rand: (n: number) => number): boolean {
  if (rand(2) === 0 || m.length < 19) return false;
  const size = m.readUInt16LE(17);
  if (size > m.length || size < 8) return false;
  reseal(m);
  return true;
}

function outcome(err: unknown, label: string): string {
  assert.ok(err instanceof FwpkgError, `${label}: ${err instanceof Error ? err.stack : String(err)}`);
  assert.ok(Number.isInteger(err.offset) && err.offset >= 0, `${label}: offset ${err.offset}`);
  assert.ok(typeof err.field === 'string' && err.field.length > 0, `${label}: field ${err.field}`);
  return err.code;
}

describe('fuzz', () => {
  it(`${bases.length * MUTATIONS_PER_PACKAGE} mutations, each through parseFwpkgHeader and inspectFwpkg`, async () => {
    const rand = prng(SEED);
    const seen = new Map<string, number>();
    const count = (key: string) => seen.set(key, (seen.get(key) ?? 0) + 1);
    for (const [name, pkg] of bases) {
      for (let i = 0; i < MUTATIONS_PER_PACKAGE; i++) {
        const { bytes, how } = mutate(pkg, rand);
        const label = `seed ${SEED}, ${name} #${i}: ${how}${maybeReseal(bytes, rand) ? ', resealed' : ''}`;
        try {
          parseFwpkgHeader(bytes);
          count('parse ok');
        } catch (err) {
          count(`parse ${outcome(err, label)}`);
        }
        const chunk = rand(10) === 0 ? 1 + rand(16) : 256 + rand(4096);
        try {
          await inspectFwpkg(chunked(bytes, chunk));
          count('inspect ok');
        } catch (err) {
          count(`inspect ${outcome(err, `${label}, chunks of ${chunk}`)}`);
        }
      }
    }
    // The mutations reach past the checksum into every kind of failure, and some still parse.
    for (const key of [
      'parse ok',
      'parse truncated',
      'parse checksum_mismatch',
      'parse bad_field',
      'parse out_of_bounds',
      'parse unsupported_revision',
      'inspect ok',
      'inspect checksum_mismatch',
    ]) {
      assert.ok(seen.has(key), `no "${key}" among ${JSON.stringify(Object.fromEntries(seen))}`);
    }
  });
});

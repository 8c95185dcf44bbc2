import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { parseConfig, PayloadKeyRingConfig } from '../src/index.js';

describe('payload key ring config', () => {
  const Hub = z.object({ keys: PayloadKeyRingConfig({ uiOrigins: z.array(z.string()).default([]) }) }).strict();

  it('takes one ring for every site or a ring per site, with a process’s own keys', () => {
    assert.deepEqual(parseConfig(Hub, { keys: { keyRingDir: '/run/keys' } }).keys, {
      keyRingDir: '/run/keys',
      uiOrigins: [],
    });
    assert.equal(parseConfig(Hub, { keys: { keyRingFile: '/run/k.json' } }).keys.keyRingFile, '/run/k.json');
  });

  for (const [what, keys] of [
    ['both', { keyRingFile: '/run/k.json', keyRingDir: '/run/keys' }],
    ['neither', {}],
  ] as const)
    it(`refuses ${what}, naming keyRingFile`, () =>
      assert.throws(
        () => parseConfig(Hub, { keys }, 'hub.json'),
        (err: Error) => /keys\.keyRingFile/.test(String((err as { problems?: string[] }).problems ?? err.message)),
      ));

  it('refuses unknown keys', () =>
    assert.throws(() => parseConfig(Hub, { keys: { keyRingDir: '/k', keyRingFiles: '/x' } }), /keyRingFiles/));
});

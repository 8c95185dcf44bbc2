import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from './lib/processes.js';

const pick = (input: string, ...args: string[]) => {
  const r = spawnSync(process.execPath, [join(repoRoot, 'tools/pick.mjs'), ...args], { input, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};

describe('tools/pick.mjs (the README one-liners)', () => {
  it('prints the field of the first item, or of the first matching item', () => {
    const body = JSON.stringify({
      items: [
        { id: 'a', format: 'fwpkg' },
        { id: 'b', format: 'nvos' },
      ],
    });
    assert.deepEqual(pick(body, 'id', 'a device'), { code: 0, stdout: 'a\n', stderr: '' });
    assert.equal(pick(body, 'id', 'an NVOS image', 'format=nvos').stdout, 'b\n');
  });

  it('an empty list is a clear message naming what was asked and what to check, exit 1, never a TypeError', () => {
    const r = pick('{"items":[],"next_cursor":null}', 'id', 'compute tray in site dev-01');
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^pick: no compute tray in site dev-01: the list is empty\. Check the filter/);
    assert.match(r.stderr, /bash tools\/up\.sh/);
    assert.doesNotMatch(r.stderr, /TypeError|^\s+at /m);
    assert.match(
      pick('{"items":[{"id":"a","format":"fwpkg"}]}', 'id', 'NVOS image', 'format=nvos').stderr,
      /no NVOS image with format=nvos/,
    );
  });

  it('an error answer, an empty answer or HTML says so', () => {
    const refused = pick('{"error":{"code":"UNAUTHENTICATED","message":"missing bearer token"}}', 'id', 'a rack');
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      new RegExp(
        /refused the request for a rack: UNAUTHENTICATED: /.source +
          /missing bearer token \(take a token from \.run\/dev\/tokens\.json\)/.source,
      ),
    );
    assert.match(pick('', 'id', 'a rack').stderr, /no answer while asking for a rack: is the hub up\?/);
    assert.match(pick('<html>', 'id', 'a rack').stderr, /not JSON/);
  });

  it('--help prints the usage and exits 0', () => {
    const r = pick('', '--help');
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^Prints one field of the first item/);
  });

  it("the README's demo picks ids with it: none of its one-liners indexes a list that may be empty", () => {
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    assert.doesNotMatch(readme, /items\[0\]|items\.find\(/);
    assert.match(readme, /node tools\/pick\.mjs id/);
  });
});

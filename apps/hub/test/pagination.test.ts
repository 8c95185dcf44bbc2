import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonPageBody } from '../src/pagination.js';

describe('jsonPageBody', () => {
  it('writes the page JSON as JSON.stringify would, multi-byte text included', () => {
    const items = [{ name: 'tray ünïcode \u2028 "q" \\' }, { name: '🙂', n: 1.5 }, { name: null }];
    const body = jsonPageBody(
      items.map((i) => JSON.stringify(i)),
      'abc_-',
    );
    assert.equal(body.toString('utf8'), JSON.stringify({ items, next_cursor: 'abc_-' }));
  });

  it('writes an empty last page', () => {
    assert.equal(jsonPageBody([], null).toString('utf8'), '{"items":[],"next_cursor":null}');
  });
});

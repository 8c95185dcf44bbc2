import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventStreamParser } from '../src/api/sse.js';

describe('text/event-stream parser', () => {
  it('returns events as their blank line completes them, across chunk boundaries and line endings', () => {
    const parser = new EventStreamParser();
    assert.deepEqual(parser.push(': keep-alive\n\nid: 7\nevent: job\nda'), []);
    assert.deepEqual(parser.push('ta: {"id":"a"}\r\n\r'), []);
    assert.deepEqual(parser.push('\nevent: device\ndata: line 1\ndata:line 2\n\n'), [
      { id: '7', event: 'job', data: '{"id":"a"}' },
      { id: '7', event: 'device', data: 'line 1\nline 2' },
    ]);
  });

  it('names an event without `event:` "message" and ignores an event without data', () => {
    const parser = new EventStreamParser();
    assert.deepEqual(parser.push('event: job\n\ndata: x\n\n'), [{ id: undefined, event: 'message', data: 'x' }]);
  });
});

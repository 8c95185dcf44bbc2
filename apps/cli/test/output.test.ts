import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Job } from '@fleet/client';
import { parse } from 'yaml';
import { progressLines } from '../src/jobs/progress.js';
import { age, cellText, parseOutputFormat, type Column } from '../src/output/format.js';
import { listPrinter, printObject, type Sink } from '../src/output/printer.js';
import { StreamingTable } from '../src/output/table.js';

function buffer(): Sink & { text: string } {
  const sink = { text: '', write: async (t: string) => void (sink.text += t) };
  return sink;
}

interface Row {
  id: string;
  name: string;
  power: string | null;
  serial?: string;
}
const columns: Column<Row>[] = [
  { header: 'ID', value: (r) => r.id },
  { header: 'NAME', value: (r) => r.name },
  { header: 'POWER', value: (r) => r.power },
  { header: 'SERIAL', value: (r) => r.serial, wide: true },
];
const page1: Row[] = [
  { id: 'a', name: 'tray-1', power: 'On', serial: 'S1' },
  { id: 'b', name: 'tray-2', power: null },
];
const page2: Row[] = [{ id: 'c', name: 'a-much-longer-device-name', power: 'Off' }];

async function printPages(format: Parameters<typeof listPrinter>[0], pages: Row[][]): Promise<string> {
  const sink = buffer();
  const printer = listPrinter(format, columns, sink);
  for (const p of pages) await printer.page(p);
  await printer.end();
  return sink.text;
}

describe('list output', () => {
  it('json is one document {items} however many pages it was written in, and empty lists are valid too', async () => {
    assert.deepEqual(JSON.parse(await printPages('json', [page1, [], page2])), { items: [...page1, ...page2] });
    assert.deepEqual(JSON.parse(await printPages('json', [])), { items: [] });
    assert.deepEqual(JSON.parse(await printPages('json', [[]])), { items: [] });
  });

  it('jsonl is one object per line; id one ID per line', async () => {
    const lines = (await printPages('jsonl', [page1, page2])).trim().split('\n');
    assert.deepEqual(
      lines.map((l) => JSON.parse(l)),
      [...page1, ...page2],
    );
    assert.equal(await printPages('id', [page1, page2]), 'a\nb\nc\n');
  });

  it('yaml is one document with items across pages', async () => {
    assert.deepEqual(parse(await printPages('yaml', [page1, page2])), { items: [...page1, ...page2] });
    assert.deepEqual(parse(await printPages('yaml', [])), { items: [] });
  });

  it('table has the header once, - for empty cells, and hides wide columns unless -o wide', async () => {
    const table = await printPages('table', [page1, page2]);
    const lines = table.trimEnd().split('\n');
    assert.match(lines[0]!, /^ID\s+NAME\s+POWER$/);
    assert.equal(lines.filter((l) => l.startsWith('ID')).length, 1);
    assert.match(lines[2]!, /^b\s+tray-2\s+-$/);
    // Widths come from the first page: a longer cell later is cut, not re-flowed.
    assert.match(lines[3]!, /^c\s+a-muc…\s+Off$/);
    const wide = await printPages('wide', [page1]);
    assert.match(wide.split('\n')[0]!, /^ID\s+NAME\s+POWER\s+SERIAL$/);
    assert.equal(await printPages('table', []), 'No items.\n');
  });
});

describe('single objects', () => {
  it('json is pretty and parses back; a render function replaces the table', async () => {
    const sink = buffer();
    await printObject(page1[0]!, 'json', sink, columns);
    assert.deepEqual(JSON.parse(sink.text), page1[0]);
    const text = buffer();
    await printObject(page1[0]!, 'table', text, (r) => `device ${r.name}\n`);
    assert.equal(text.text, 'device tray-1\n');
  });

  it('a one-row table lines up under its header', () => {
    const out = new StreamingTable(columns.filter((c) => !c.wide)).render([page1[0]!]);
    assert.deepEqual(out.trimEnd().split('\n'), ['ID  NAME    POWER', 'a   tray-1  On']);
  });
});

describe('cells and formats', () => {
  it('renders empty, list and object values readably', () => {
    assert.equal(cellText(null), '-');
    assert.equal(cellText([]), '-');
    assert.equal(cellText(['a', 'b']), 'a,b');
    assert.equal(cellText({ a: 1 }), '{"a":1}');
    assert.equal(cellText(0), '0');
  });

  it('ages like kubectl', () => {
    const now = Date.parse('2030-01-02T00:00:00Z');
    assert.equal(age('2030-01-01T23:59:30Z', now), '30s');
    assert.equal(age('2030-01-01T23:00:00Z', now), '60m');
    assert.equal(age('2030-01-01T00:00:00Z', now), '24h');
    assert.equal(age('2029-12-20T00:00:00Z', now), '13d');
    assert.equal(age(null, now), '-');
  });

  it('refuses an unknown -o', () => {
    assert.equal(parseOutputFormat('wide'), 'wide');
    assert.throws(() => parseOutputFormat('xml'), /expected one of table, wide, json/);
  });
});

describe('job progress lines', () => {
  const base = {
    id: 'j1',
    kind: 'rack.power',
    state: 'queued',
    progress: null,
    timeline: null,
    error: null,
    children: undefined,
  } as unknown as Job;

  it('say the state, each stage that moved, the devices by state and the error, once each', () => {
    const running = {
      ...base,
      state: 'running',
      timeline: {
        currentStage: 'shelves',
        stages: [
          { name: 'shelves', status: 'running' },
          { name: 'compute', status: 'queued' },
        ],
      },
      children: { total: 3, by_state: { running: 2, succeeded: 1 } },
    } as unknown as Job;
    assert.deepEqual(progressLines(undefined, base), ['job j1 (rack.power) queued']);
    assert.deepEqual(progressLines(base, running), [
      'job j1 (rack.power) running',
      '  stage 1/2 shelves: running',
      '  devices: 1/3 succeeded, 2 running',
    ]);
    assert.deepEqual(progressLines(running, running), []);
    const failed = {
      ...running,
      state: 'failed',
      timeline: {
        currentStage: null,
        stages: [
          { name: 'shelves', status: 'completed', durationS: 1.25 },
          { name: 'compute', status: 'failed', message: 'tray-3 did not power on' },
        ],
      },
      children: { total: 3, by_state: { failed: 1, succeeded: 2 } },
      error: { code: 'RACK_POWER_FAILED', message: '1 device failed' },
    } as unknown as Job;
    assert.deepEqual(progressLines(running, failed), [
      'job j1 (rack.power) failed',
      '  stage 1/2 shelves: completed in 1.3 s',
      '  stage 2/2 compute: failed (tray-3 did not power on)',
      '  devices: 2/3 succeeded, 1 failed',
      '  error RACK_POWER_FAILED: 1 device failed',
    ]);
  });

  it('say the progress of a job without stages', () => {
    const p = { ...base, state: 'running', progress: { stage: 'pushing', percent: 42.4, message: 'bmc' } } as Job;
    assert.deepEqual(progressLines(base, p), ['job j1 (rack.power) running', '  pushing 42%: bmc']);
  });
});

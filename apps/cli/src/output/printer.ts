import { UsageError } from '../exit-codes.js';
import { stringify } from 'yaml';
import { columnsFor, type Column, type OutputFormat } from './format.js';
import { StreamingTable } from './table.js';

/** Where a command prints: stdout in the CLI, a string buffer in tests. Honours backpressure. */
export interface Sink {
  write(text: string): Promise<void>;
}

export function streamSink(stream: NodeJS.WritableStream): Sink {
  return {
    write: (text) =>
      new Promise((resolve, reject) => {
        if (stream.write(text)) return resolve();
        stream.once('drain', resolve);
        stream.once('error', reject);
      }),
  };
}

/** Prints a list page by page in `format`; call `end()` once after the last page. */
export interface ListPrinter<T> {
  page(items: T[]): Promise<void>;
  end(): Promise<void>;
}

export function listPrinter<T>(format: OutputFormat, columns: Column<T>[], sink: Sink): ListPrinter<T> {
  let count = 0;
  switch (format) {
    case 'json':
      // `{"items": [...]}` with one item per line: valid JSON as a whole, written as it arrives.
      return {
        page: async (items) => {
          if (!items.length) return;
          const head = count === 0 ? '{"items": [\n' : ',\n';
          count += items.length;
          await sink.write(head + items.map((i) => JSON.stringify(i)).join(',\n'));
        },
        end: () => sink.write(count === 0 ? '{"items": []}\n' : '\n]}\n'),
      };
    case 'jsonl':
      return {
        page: (items) => sink.write(items.map((i) => JSON.stringify(i) + '\n').join('')),
        end: async () => undefined,
      };
    case 'yaml':
      return {
        page: async (items) => {
          if (!items.length) return;
          const head = count === 0 ? 'items:\n' : '';
          count += items.length;
          await sink.write(head + indent(stringify(items), '  '));
        },
        end: async () => (count === 0 ? sink.write('items: []\n') : undefined),
      };
    case 'id':
      return {
        page: (items) => sink.write(items.map((i) => `${idOf(i)}\n`).join('')),
        end: async () => undefined,
      };
    case 'table':
    case 'wide': {
      const table = new StreamingTable(columnsFor(columns, format));
      return {
        page: async (items) => {
          count += items.length;
          if (items.length) await sink.write(table.render(items));
        },
        end: async () => (count === 0 ? sink.write('No items.\n') : undefined),
      };
    }
  }
}

/** One object: `json` pretty-printed, `yaml`, its ID, or a one-row table (`render` replaces the table). */
export async function printObject<T>(
  value: T,
  format: OutputFormat,
  sink: Sink,
  table: Column<T>[] | ((value: T) => string),
): Promise<void> {
  if (format === 'json') return sink.write(JSON.stringify(value, null, 2) + '\n');
  if (format === 'jsonl') return sink.write(JSON.stringify(value) + '\n');
  if (format === 'yaml') return sink.write(stringify(value));
  if (format === 'id') return sink.write(`${idOf(value)}\n`);
  if (typeof table === 'function') return sink.write(table(value));
  return sink.write(new StreamingTable(columnsFor(table, format)).render([value]));
}

/**
 * What `-o id` prints: the object's `id`, or for one that is about a device and has none of its own (a health
 * reading) the device's; anything else is a usage error rather than a line saying `undefined`.
 */
function idOf(value: unknown): string {
  const { id, device_id: deviceId } = value as { id?: unknown; device_id?: unknown };
  const found = id ?? deviceId;
  if (typeof found !== 'string' && typeof found !== 'number')
    throw new UsageError('-o id: these results carry no id; use -o json or -o yaml');
  return String(found);
}

function indent(text: string, prefix: string): string {
  return text
    .split('\n')
    .map((line) => (line ? prefix + line : line))
    .join('\n');
}

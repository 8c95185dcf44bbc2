import { unwrap } from '@fleet/client';
import type { Command } from 'commander';
import { stringify } from 'yaml';
import { items, pages, type Query } from '../api/pages.js';
import { watch } from '../api/watch.js';
import { UsageError } from '../exit-codes.js';
import { isTerminal } from '../jobs/follow.js';
import { columnsFor, type OutputFormat } from '../output/format.js';
import { listPrinter, printObject } from '../output/printer.js';
import { StreamingTable } from '../output/table.js';
import { resources, type Resource } from '../resources.js';
import type { Runtime } from '../runtime.js';
import { collect, examples, outputOption, positiveInt } from './options.js';

export interface GetOptions {
  output: OutputFormat;
  watch?: boolean;
  limit?: number;
  /** Undefined for a list the hub does not page. */
  pageSize?: number;
  [filter: string]: unknown;
}

export function registerGet(program: Command, rt: Runtime): void {
  const get = program
    .command('get')
    .description(`list resources, or show one by ID: ${resources.map((r) => r.names[0]).join(', ')}`);
  examples(get, 'fleetctl get devices --site dev-01 -o wide', 'fleetctl get job 0b6f… --watch');
  for (const resource of resources) registerResource(get, rt, resource);
}

/**
 * `<name> [id]` under `parent`: the resource's list with its filters, or one item. `name` (with `aliases`) names the
 * command where it is not the resource's own (`sla breaches` for `get sla-breaches`).
 */
export function registerResource(
  parent: Command,
  rt: Runtime,
  resource: Resource,
  [name, ...aliases]: string[] = resource.names,
): Command {
  const cmd = parent
    .command(`${name} [id]`)
    .aliases(aliases)
    .description(`list ${name} (with the API's filters), or show one${resource.item ? '' : ' (list only)'}`);
  listOptions(cmd, resource, `${parent.name()} ${name}`);
  cmd.action(async (id: string | undefined, opts: GetOptions) => {
    if (id) return showOne(rt, resource, id, opts);
    return listResource(rt, resource, opts);
  });
  return cmd;
}

/** The list options every list command takes: filters, output, --watch, --limit and (paged lists) --page-size. */
export function listOptions(cmd: Command, resource: Resource, path: string): Command {
  for (const f of resource.filters) {
    if (f.boolean) cmd.option(`--${f.flag}`, f.description);
    else if (f.single) cmd.option(`--${f.flag} <value>`, f.description);
    else cmd.option(`--${f.flag} <value>`, `${f.description} (repeat or comma-separate for several)`, collect);
  }
  outputOption(cmd)
    .option('-w, --watch', 'keep printing changes (a job or campaign: until it ends)')
    .option('--limit <n>', 'print at most n items', positiveInt);
  if (resource.paged !== false)
    cmd.option('--page-size <n>', 'items per request to the hub (1-1000)', positiveInt, 500);
  return examples(cmd, resource.example, `fleetctl ${path} -o json | jq '.items[].id'`);
}

/** Prints the list (page by page) with the filters given, or with --watch its changes. */
export async function listResource(rt: Runtime, resource: Resource, opts: GetOptions): Promise<void> {
  if (opts.pageSize !== undefined && (opts.pageSize < 1 || opts.pageSize > 1000))
    throw new UsageError('--page-size must be between 1 and 1000');
  const query = filterQuery(resource, opts);
  if (opts.watch) return watchList(rt, resource, query, opts);
  const printer = listPrinter(opts.output, resource.columns, rt.out);
  for await (const page of items(pages(rt.hub(), resource.list, query, opts.pageSize), opts.limit))
    await printer.page(page);
  await printer.end();
}

export function filterQuery(resource: Resource, opts: Record<string, unknown>): Query {
  const query: Query = {};
  for (const f of resource.filters) {
    const value = opts[camel(f.flag)];
    if (value === undefined) continue;
    query[f.param] = f.boolean ? 'true' : (value as string | string[]);
  }
  return query;
}

const camel = (flag: string) => flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

async function fetchOne(rt: Runtime, resource: Resource, id: string): Promise<unknown> {
  if (!resource.item) throw new UsageError(`the hub lists ${resource.names[0]} but has no route for one; use filters`);
  return unwrap(rt.hub().raw.GET(resource.item, { params: { path: { id } } }));
}

/** A job or a campaign (whose job is inside it) that has ended. */
function ended(value: unknown): boolean {
  const v = value as { state?: string; job?: { state: string } };
  const state = v.job?.state ?? v.state;
  return state !== undefined && isTerminal({ state });
}

async function showOne(rt: Runtime, resource: Resource, id: string, opts: GetOptions): Promise<void> {
  if (!opts.watch) return printObject(await fetchOne(rt, resource, id), opts.output, rt.out, resource.columns);
  const table = new StreamingTable(columnsFor(resource.columns, opts.output));
  let last: string | undefined;
  await watch(
    rt.hub(),
    (event) => JSON.stringify(event.data).includes(id),
    async () => {
      const value = await fetchOne(rt, resource, id);
      const text = JSON.stringify(value);
      if (text !== last) await printChange(rt, value, opts.output, table);
      last = text;
      return ended(value);
    },
    { pollMs: 1000, safetyPollMs: 15_000 },
  );
}

/** Watching prints each new version of an object: a table row, or one JSON/YAML document. */
async function printChange(rt: Runtime, value: unknown, format: OutputFormat, table: StreamingTable<unknown>) {
  if (format === 'json' || format === 'jsonl') return rt.out.write(JSON.stringify(value) + '\n');
  if (format === 'yaml') return rt.out.write(`---\n${stringify(value)}`);
  if (format === 'id') return rt.out.write(`${(value as { id: string }).id}\n`);
  return rt.out.write(table.render([value]));
}

/** Lists again on every change the hub announces (or every 2 s), printing the items that are new or changed. */
async function watchList(rt: Runtime, resource: Resource, query: Query, opts: GetOptions): Promise<void> {
  const table = new StreamingTable(columnsFor(resource.columns, opts.output));
  const seen = new Map<string, string>();
  await watch(
    rt.hub(),
    (event) => !resource.event || event.type === resource.event,
    async () => {
      for await (const page of items(pages(rt.hub(), resource.list, query, opts.pageSize), opts.limit)) {
        for (const item of page) {
          const key = String((item as { id: unknown }).id);
          const text = JSON.stringify(item);
          if (seen.get(key) === text) continue;
          seen.set(key, text);
          await printChange(rt, item, opts.output, table);
        }
      }
      return false;
    },
    { pollMs: 2000, safetyPollMs: 30_000 },
  );
}

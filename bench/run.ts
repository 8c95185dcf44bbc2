import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';

// `pnpm bench <name>`: runs bench/<name>.ts, prints its figures as one JSON line
// (last line of output) and writes them to bench/results/<name>.json.
const name = process.argv[2];
if (!name || !/^[a-z0-9-]+$/.test(name)) {
  console.error('usage: pnpm bench <name>   (a file bench/<name>.ts)');
  process.exit(2);
}
const mod = (await import(`./${name}.ts`)) as { run: (args: string[]) => Promise<Record<string, unknown>> };
const figures = {
  bench: name,
  ...(await mod.run(process.argv.slice(3))),
  cores: cpus().length,
  at: new Date().toISOString(),
};
writeFileSync(
  fileURLToPath(new URL(`./results/${name}.json`, import.meta.url)),
  JSON.stringify(figures, null, 2) + '\n',
);
console.log(JSON.stringify(figures));
process.exit(0);

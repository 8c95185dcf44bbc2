import { readFileSync, rmSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { join } from 'node:path';
import { build, type BuildOptions, type Metafile, type Plugin } from 'esbuild';
import { DefaultLogger } from '@temporalio/worker';
import { buildWorkflowBundle } from '@fleet/satellite';
import { buildOutputs, buildTargets, type BuildTarget } from './lib/build-entries.js';
import { repoRoot } from './lib/processes.js';

// `pnpm build`: each process compiled to JavaScript that plain `node` runs (tools/lib/build-entries.ts lists them).
if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log(`usage: pnpm build   (node --import tsx tools/build.ts)

Compiles the hub (and its CLIs, the migrate CLI among them), the workflow agent, the NetBox agent, the satellite (with
its prebuilt Temporal workflow bundle) and the simulator into each package's dist/, for \`node <package>/dist/main.js\`.
Workspace packages are compiled in; npm packages stay imports, which each package's package.json must list (the build
fails naming any that it does not). Then the web console (apps/web/dist) and fleetctl (apps/cli/dist).`);
  process.exit(0);
}

/** npm packages (and Node's own modules) stay imports; the workspace's TypeScript sources are compiled in. */
const npmExternal: Plugin = {
  name: 'npm-external',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith('@fleet/') ? undefined : { external: true }));
  },
};

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  metafile: true as const,
  logLevel: 'warning',
  plugins: [npmExternal],
  absWorkingDir: repoRoot,
} satisfies BuildOptions;

/** `pg` of `pg/lib/x`, `@scope/name` of `@scope/name/sub`. */
function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return parts.slice(0, specifier.startsWith('@') ? 2 : 1).join('/');
}

/**
 * npm packages the bundles import that the target's package.json does not list: pnpm gives each package only its own
 * dependencies, so from `<package>/dist` they would not resolve (a workspace package's dependencies are its own).
 */
function undeclaredImports(target: BuildTarget, metafiles: Metafile[]): string[] {
  const pkg = JSON.parse(readFileSync(join(repoRoot, target.packageDir, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
  };
  const declared = new Set(Object.keys(pkg.dependencies ?? {}));
  const missing = new Map<string, string>();
  for (const metafile of metafiles) {
    for (const [input, { imports }] of Object.entries(metafile.inputs)) {
      for (const imported of imports) {
        if (!imported.external || isBuiltin(imported.path)) continue;
        const name = packageName(imported.path);
        if (!declared.has(name) && !missing.has(name)) missing.set(name, input);
      }
    }
  }
  return [...missing].map(([name, input]) => `${name} (imported by ${input})`);
}

/** Builds one target; returns what its package.json lacks (empty when the build is usable). */
async function buildTarget(target: BuildTarget): Promise<string[]> {
  const outdir = join(repoRoot, target.packageDir, 'dist');
  rmSync(outdir, { recursive: true, force: true });
  const main = await build({
    ...common,
    entryPoints: target.entries.map((e) => join(repoRoot, e)),
    outdir,
    // One file per entry (no shared chunks): a bundle finds the files beside it from its own import.meta.url.
    entryNames: '[name]',
    format: 'esm',
    // Files the build writes beside the bundles; from the sources these are undefined and the sources' own are used.
    define: {
      FLEET_FAILURE_CONVERTER_FILE: JSON.stringify(`./${buildOutputs.failureConverter}`),
      ...(target.workflowBundle
        ? { FLEET_WORKFLOW_BUNDLE_FILE: JSON.stringify(`./${buildOutputs.workflowBundle}`) }
        : {}),
    },
  });
  const metafiles = [main.metafile];
  // Temporal's SDK require()s the failure converter by path: a CommonJS copy for the bundles that name it.
  if (Object.keys(main.metafile.inputs).includes('packages/temporal/src/data-converter.ts')) {
    const converter = await build({
      ...common,
      entryPoints: [join(repoRoot, 'packages/temporal/src/failure-converter.ts')],
      outfile: join(outdir, buildOutputs.failureConverter),
      format: 'cjs',
    });
    metafiles.push(converter.metafile);
  }
  // The satellite loads this instead of bundling its workflows at start (webpack, seconds of CPU).
  // webpack's module listing stays out of the build's output; its warnings and errors do not.
  if (target.workflowBundle)
    await buildWorkflowBundle(join(outdir, buildOutputs.workflowBundle), { logger: new DefaultLogger('WARN') });
  return undeclaredImports(target, metafiles).map((missing) => `${target.packageDir}/package.json lacks ${missing}`);
}

const started = Date.now();
const undeclared: string[] = [];
for (const target of buildTargets) {
  const t0 = Date.now();
  undeclared.push(...(await buildTarget(target)));
  console.log(`build: ${target.packageDir}/dist (${Date.now() - t0} ms)`);
}
if (undeclared.length) {
  console.error(
    'build: the bundles import npm packages their package.json does not list in dependencies; they would not ' +
      `resolve at run time:\n  ${undeclared.join('\n  ')}`,
  );
  process.exit(1);
}
console.log(`build: done in ${((Date.now() - started) / 1000).toFixed(1)} s`);

import { basename, join } from 'node:path';

/**
 * What `pnpm build` (tools/build.ts) compiles: per package that ships a process, its entry points (sources) and the
 * folder their JavaScript goes to. Each bundle lands in the `dist/` of the package whose dependencies it imports
 * (node resolves a bundle's npm imports from that package's node_modules), so the migrate CLI, run by the hub's
 * deployment before the hub starts, goes with the hub.
 */
export interface BuildTarget {
  /** The package folder; its package.json must list every npm package the bundles import. */
  packageDir: string;
  /** Sources, each compiled to `<packageDir>/dist/<file name>.js`. */
  entries: string[];
  /** The prebuilt Temporal workflow bundle, `<packageDir>/dist/workflow-bundle.js` (the satellite's). */
  workflowBundle?: boolean;
}

export const buildTargets: BuildTarget[] = [
  {
    packageDir: 'apps/hub',
    entries: [
      'apps/hub/src/main.ts',
      'apps/hub/src/admin-cli.ts',
      'apps/hub/src/audit-cli.ts',
      'apps/hub/src/openapi-cli.ts',
      'packages/db/src/migrate-cli.ts',
    ],
  },
  { packageDir: 'apps/workflow-agent', entries: ['apps/workflow-agent/src/main.ts'] },
  { packageDir: 'apps/netbox-agent', entries: ['apps/netbox-agent/src/main.ts'] },
  { packageDir: 'apps/satellite', entries: ['apps/satellite/src/main.ts'], workflowBundle: true },
  { packageDir: 'packages/simulators', entries: ['packages/simulators/src/main.ts'] },
];

/** File names the build writes beside the bundles, which the bundles find from their own location. */
export const buildOutputs = { failureConverter: 'failure-converter.cjs', workflowBundle: 'workflow-bundle.js' };

/** The compiled file of a source entry, relative to the repository root, e.g. apps/hub/dist/main.js. */
export function distEntry(source: string): string {
  const target = buildTargets.find((t) => t.entries.includes(source));
  if (!target) throw new Error(`${source} is not a build entry (tools/lib/build-entries.ts)`);
  return join(target.packageDir, 'dist', `${basename(source, '.ts')}.js`);
}

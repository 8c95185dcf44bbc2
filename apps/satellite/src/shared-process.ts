import { resolve } from 'node:path';
import type { SatelliteConfig } from './config.js';

/**
 * What several sites' configs in one satellite process must not share: a site runs once, and each keeps its own state
 * (action journal, known hosts, pending passwords), package cache and listening ports. One problem per clash, naming
 * both files.
 */
export function sharedProcessProblems(files: readonly string[], configs: readonly SatelliteConfig[]): string[] {
  const claims: [what: string, key: (c: SatelliteConfig) => string | undefined][] = [
    ['siteId', (c) => c.siteId],
    ['dataDir', (c) => resolve(c.dataDir)],
    ['artifacts.dir', (c) => resolve(c.artifacts.dir)],
    // Port 0 picks a free one each time: never a clash.
    ['metrics.port', (c) => (c.metrics.port ? String(c.metrics.port) : undefined)],
    ['events.listen.port', (c) => (c.events?.listen.port ? String(c.events.listen.port) : undefined)],
  ];
  const problems: string[] = [];
  for (const [what, key] of claims) {
    const owners = new Map<string, string>();
    for (const [i, config] of configs.entries()) {
      const value = key(config);
      if (value === undefined) continue;
      const owner = owners.get(value);
      if (owner)
        problems.push(`${files[i]}: ${what} ${value} is also ${owner}'s: each site in a process needs its own`);
      else owners.set(value, files[i]!);
    }
  }
  return problems;
}

import { resolve, sep } from 'node:path';
import { ConfigError, loadConfig, readTemporalTls, type TemporalConnectionTls } from '@fleet/config';
import { SatelliteConfig } from './config.js';

/** One site's config file, parsed, with the Temporal TLS material it names already read. */
export interface SiteConfig {
  file: string;
  config: SatelliteConfig;
  temporalTls: TemporalConnectionTls | undefined;
}

/**
 * Every file's config and Temporal TLS files, every problem of every file listed at once (each named by its file when
 * there are several), and then what the files must not share: nothing starts unless all of them can.
 */
export function loadSiteConfigs(files: readonly string[]): SiteConfig[] {
  const problems: string[] = [];
  const sites: SiteConfig[] = [];
  for (const file of files) {
    try {
      const config = loadConfig(SatelliteConfig, file);
      sites.push({ file, config, temporalTls: readTemporalTls(config.temporal.tls, file) });
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(...err.problems.map((p) => (files.length === 1 ? p : `${file}: ${p}`)));
    }
  }
  if (!problems.length) problems.push(...sharedProcessProblems(sites));
  if (problems.length) throw new ConfigError(files.join(', '), problems);
  return sites;
}

interface Claim {
  /** The site's place in the list: the same file given twice is two sites, and clashes with itself. */
  site: number;
  file: string;
  what: string;
  value: string;
  kind: 'site' | 'path' | 'port';
}

/**
 * What several sites in one satellite process must not share: a site runs once, and each keeps its own state (action
 * journal, known hosts, pending passwords) and package cache, in folders apart (neither inside the other: the cache
 * evicts what it finds in its folder), and its own listening ports (metrics and events alike). One problem per clash,
 * naming both files.
 */
export function sharedProcessProblems(sites: readonly Pick<SiteConfig, 'file' | 'config'>[]): string[] {
  const claims: Claim[] = sites.flatMap(({ file, config: c }, site) =>
    [
      { kind: 'site' as const, what: 'siteId', value: c.siteId },
      { kind: 'path' as const, what: 'dataDir', value: resolve(c.dataDir) },
      { kind: 'path' as const, what: 'artifacts.dir', value: resolve(c.artifacts.dir) },
      // Port 0 picks a free one each time: never a clash.
      ...(c.metrics.port ? [{ kind: 'port' as const, what: 'metrics.port', value: String(c.metrics.port) }] : []),
      ...(c.events?.listen.port
        ? [{ kind: 'port' as const, what: 'events.listen.port', value: String(c.events.listen.port) }]
        : []),
    ].map((claim) => ({ ...claim, site, file })),
  );
  const problems: string[] = [];
  for (const [i, claim] of claims.entries()) {
    const other = claims.slice(0, i).find((o) => o.kind === claim.kind && o.site !== claim.site && clash(claim, o));
    if (!other) continue;
    const mine = `${claim.file}: ${claim.what} ${claim.value}`;
    problems.push(
      claim.value === other.value
        ? `${mine} is also ${other.file}'s ${other.what}: each site in a process needs its own`
        : `${mine} and ${other.file}'s ${other.what} ${other.value} lie one inside the other: each site in a process ` +
            'needs folders apart',
    );
  }
  return problems;
}

function clash(a: Claim, b: Claim): boolean {
  if (a.value === b.value) return true;
  return a.kind === 'path' && (a.value.startsWith(b.value + sep) || b.value.startsWith(a.value + sep));
}

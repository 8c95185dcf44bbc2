import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError } from '@fleet/config';
import { SatelliteConfig } from '../src/config.js';
import { loadSiteConfigs, sharedProcessProblems } from '../src/site-configs.js';

const raw = (siteId: string, extra: Record<string, unknown> = {}) => ({
  siteId,
  log: { level: 'info' },
  metrics: { port: 0 },
  temporal: { address: '127.0.0.1:7233', namespace: 'default' },
  secrets: { provider: 'file', path: `/etc/fleet/${siteId}-secrets.json` },
  dataDir: `/var/lib/fleet/${siteId}`,
  artifacts: { dir: `/var/cache/fleet/${siteId}` },
  ...extra,
});
const site = (file: string, siteId: string, extra: Record<string, unknown> = {}) => ({
  file,
  config: SatelliteConfig.parse(raw(siteId, extra)),
});
const events = (port: number) => ({
  events: { listen: { host: '0.0.0.0', port }, publicUrl: `http://10.0.0.1:${port}/events` },
});

describe('several sites in one satellite process', () => {
  it('accepts sites with their own state, caches and ports (port 0 is never a clash)', () => {
    assert.deepEqual(sharedProcessProblems([site('a.json', 'a'), site('b.json', 'b')]), []);
  });

  it('names both files of every clash: a site twice, a shared or nested folder, a shared port of any kind', () => {
    const problems = sharedProcessProblems([
      site('a.json', 'a', { metrics: { port: 9464 } }),
      // The same folder spelled differently is still the same folder; a's cache inside b's data folder clashes too.
      site('b.json', 'b', { dataDir: '/var/cache/fleet/a/', ...events(9464) }),
      site('c.json', 'a', { dataDir: '/srv/c', artifacts: { dir: '/srv/c-artifacts' } }),
    ]);
    assert.deepEqual(problems, [
      "b.json: dataDir /var/cache/fleet/a is also a.json's artifacts.dir: each site in a process needs its own",
      "b.json: events.listen.port 9464 is also a.json's metrics.port: each site in a process needs its own",
      "c.json: siteId a is also a.json's siteId: each site in a process needs its own",
    ]);
    assert.deepEqual(
      sharedProcessProblems([
        site('a.json', 'a', { dataDir: '/srv/fleet' }),
        site('b.json', 'b', { dataDir: '/srv/fleet/b' }),
      ]),
      [
        "b.json: dataDir /srv/fleet/b and a.json's dataDir /srv/fleet lie one inside the other: " +
          'each site in a process needs folders apart',
      ],
    );
  });

  it('refuses the same file given twice: one site, two workers', () => {
    assert.deepEqual(sharedProcessProblems([site('a.json', 'a'), site('a.json', 'a')]), [
      "a.json: siteId a is also a.json's siteId: each site in a process needs its own",
      "a.json: dataDir /var/lib/fleet/a is also a.json's dataDir: each site in a process needs its own",
      "a.json: artifacts.dir /var/cache/fleet/a is also a.json's artifacts.dir: each site in a process needs its own",
    ]);
  });

  it('lets one site nest its own cache in its own data folder', () => {
    assert.deepEqual(
      sharedProcessProblems([site('a.json', 'a', { artifacts: { dir: '/var/lib/fleet/a/cache' } })]),
      [],
    );
  });

  it("loads every file, listing every file's problems at once, each named by its file", () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-sites-'));
    const write = (name: string, body: unknown) => {
      const file = join(dir, name);
      writeFileSync(file, JSON.stringify(body));
      return file;
    };
    const good = write('good.json', raw('good'));
    const badSite = write('bad-site.json', raw('Bad Site'));
    const noTls = write(
      'no-tls.json',
      raw('no-tls', {
        temporal: {
          address: '127.0.0.1:7233',
          namespace: 'default',
          tls: { caFile: join(dir, 'ca.pem'), certFile: join(dir, 'c.pem'), keyFile: join(dir, 'k.pem') },
        },
      }),
    );
    assert.deepEqual(
      loadSiteConfigs([good]).map((s) => s.config.siteId),
      ['good'],
    );
    assert.throws(
      () => loadSiteConfigs([good, badSite, noTls]),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.equal(err.problems.length, 4, err.problems.join('\n'));
        assert.match(err.problems[0]!, new RegExp(`^${badSite}: siteId: must be a lower-case slug`));
        for (const [i, field] of ['caFile', 'certFile', 'keyFile'].entries())
          assert.match(err.problems[i + 1]!, new RegExp(`^${noTls}: temporal\\.tls\\.${field}: cannot read`));
        return true;
      },
    );
    // Clashes are checked once every file parses.
    assert.throws(() => loadSiteConfigs([good, write('again.json', raw('good'))]), /siteId good is also/);
  });
});

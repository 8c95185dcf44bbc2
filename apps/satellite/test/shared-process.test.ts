import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SatelliteConfig } from '../src/config.js';
import { sharedProcessProblems } from '../src/shared-process.js';

const site = (siteId: string, extra: Record<string, unknown> = {}) =>
  SatelliteConfig.parse({
    siteId,
    log: { level: 'info' },
    metrics: { port: 0 },
    temporal: { address: '127.0.0.1:7233', namespace: 'default' },
    secrets: { provider: 'file', path: `/etc/fleet/${siteId}-secrets.json` },
    dataDir: `/var/lib/fleet/${siteId}`,
    artifacts: { dir: `/var/cache/fleet/${siteId}` },
    ...extra,
  });

describe('several sites in one satellite process', () => {
  it('accepts sites with their own state, caches and ports (port 0 is never a clash)', () => {
    assert.deepEqual(sharedProcessProblems(['a.json', 'b.json'], [site('a'), site('b')]), []);
  });

  it('names both files of every clash: a site twice, a shared data or cache folder, a shared port', () => {
    const problems = sharedProcessProblems(
      ['a.json', 'b.json', 'c.json'],
      [
        site('a', { metrics: { port: 9464 } }),
        // The same folder spelled differently is still the same folder.
        site('b', { dataDir: '/var/lib/fleet/a/', metrics: { port: 9464 } }),
        site('a', { artifacts: { dir: '/var/cache/fleet/b' } }),
      ],
    );
    assert.deepEqual(problems, [
      "c.json: siteId a is also a.json's: each site in a process needs its own",
      "b.json: dataDir /var/lib/fleet/a is also a.json's: each site in a process needs its own",
      // c.json is site a again, so its data folder is a's too.
      "c.json: dataDir /var/lib/fleet/a is also a.json's: each site in a process needs its own",
      "c.json: artifacts.dir /var/cache/fleet/b is also b.json's: each site in a process needs its own",
      "b.json: metrics.port 9464 is also a.json's: each site in a process needs its own",
    ]);
  });

  it('refuses two event listeners on one port', () => {
    const events = (port: number) => ({
      events: { listen: { host: '0.0.0.0', port }, publicUrl: `http://10.0.0.1:${port}/events` },
    });
    assert.deepEqual(sharedProcessProblems(['a.json', 'b.json'], [site('a', events(8443)), site('b', events(8443))]), [
      "b.json: events.listen.port 8443 is also a.json's: each site in a process needs its own",
    ]);
  });
});

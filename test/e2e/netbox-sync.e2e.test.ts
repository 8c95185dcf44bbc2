import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createFleetClient, unwrap, type Device, type FleetClient } from '@fleet/client';
import { connectDb, createApiToken, type DbHandle } from '@fleet/db';
import { cloneTestDatabase, type TestDatabase } from '@fleet/db/testing';
import { freePort } from '@fleet/temporal';
import { planFleet } from '../../tools/fleetgen/layout.js';
import { NetboxWriter, writeFleet } from '../../tools/fleetgen/netbox-writer.js';
import { ManagedProcess, repoRoot } from '../../tools/lib/processes.js';
import { testEnv } from '../harness/env.js';
import { startNetbox, type NetboxServer } from '../harness/netbox.js';

describe('NetBox agent against a real NetBox', () => {
  let netbox: NetboxServer;
  let database: TestDatabase;
  let handle: DbHandle;
  let hub: ManagedProcess;
  let agent: ManagedProcess;
  let badAgent: ManagedProcess;
  let api: FleetClient;
  let writer: NetboxWriter;
  const dir = join(repoRoot, '.run', 'tests', `netbox-${Date.now()}`);

  before(
    async () => {
      mkdirSync(dir, { recursive: true });
      netbox = await startNetbox();
      writer = new NetboxWriter(netbox.url, netbox.token);
      const fleet = planFleet({
        sites: 1,
        racksPerSite: 1,
        rackTypes: ['gb200_nvl72'],
        firstAddress: '127.40.0.1',
        sitePrefix: 'nbt',
      });
      await writeFleet(writer, fleet, {
        managementProfile: 'redfish-http:8443',
        credentialRef: 'bmc/default',
        nvos: { nvuePort: 8444, sshPort: 8445 },
      });

      const env = testEnv();
      database = await cloneTestDatabase(env.databaseUrl, env.templateDb);
      handle = connectDb(database.url, 2);
      const token = (await createApiToken(handle.db, 'nb-viewer', 'viewer')).token;
      const tokenFile = join(dir, 'netbox-token');
      writeFileSync(tokenFile, netbox.token, { mode: 0o600 });
      const badTokenFile = join(dir, 'bad-token');
      writeFileSync(badTokenFile, 'nbt_nope.wrongwrongwrong', { mode: 0o600 });
      const hubPort = await freePort();
      api = createFleetClient({ baseUrl: `http://127.0.0.1:${hubPort}`, token });
      const write = (name: string, config: unknown) => {
        const f = join(dir, `${name}.json`);
        writeFileSync(f, JSON.stringify(config));
        return f;
      };
      hub = new ManagedProcess(
        'hub',
        'apps/hub/src/main.ts',
        write('hub', {
          metrics: { port: 0 },
          database: { url: database.url },
          http: { port: hubPort, allowPlainHttp: true },
        }),
        dir,
      );
      const agentConfig = (tokenPath: string) => ({
        metrics: { port: 0 },
        database: { url: database.url },
        netbox: { url: netbox.url, tokenFile: tokenPath },
        sync: { intervalS: 1, overlapS: 2, fullSyncIntervalS: 3600 },
      });
      agent = new ManagedProcess(
        'netbox-agent',
        'apps/netbox-agent/src/main.ts',
        write('agent', agentConfig(tokenFile)),
        dir,
      );
      badAgent = new ManagedProcess(
        'netbox-agent-bad-token',
        'apps/netbox-agent/src/main.ts',
        write('bad-agent', { ...agentConfig(badTokenFile), database: { url: database.url } }),
        dir,
      );
      await hub.start('hub listening');
      await agent.start('netbox agent started');
    },
    { timeout: 600_000 },
  );

  after(async () => {
    await Promise.allSettled([hub?.stop(), agent?.stop(), badAgent?.stop()]);
    await handle?.close();
    await database?.drop();
    await netbox?.stop(true);
    if (!process.env['FLEET_KEEP_TEST_RUNS']) rmSync(dir, { recursive: true, force: true });
  });

  const devices = async () =>
    (await unwrap(api.GET('/v1/devices', { params: { query: { site_id: ['nbt-01'], limit: 1000 } } }))).items;
  const device = (id: string) => unwrap(api.GET('/v1/devices/{id}', { params: { path: { id } } }));
  const sites = () => unwrap(api.GET('/v1/sites'));
  /** Every device here comes from NetBox: its id there. */
  const netboxId = ({ name, provenance }: Device) => {
    if (provenance.source !== 'netbox') throw new Error(`${name} is not from NetBox`);
    return provenance.netbox_id;
  };
  /** Polls until `check` holds; a sync interval is 1 s, so this allows a few. */
  const eventually = async <T>(
    what: string,
    read: () => Promise<T>,
    check: (v: T) => boolean,
    timeoutMs = 15_000,
  ): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = await read();
      if (check(v)) return v;
      if (Date.now() > deadline)
        throw new Error(`${what}: not within ${timeoutMs} ms; last: ${JSON.stringify(v).slice(0, 500)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  };

  it('mirrors the rack: 35 devices with BMC URLs from their OOB IPs and custom fields', async () => {
    // A full sync writes devices first and derives BMC URLs once their addresses are in.
    const list = await eventually('initial sync', devices, (l) => l.length === 35 && l.every((d) => d.bmc_url), 60_000);
    const ct = list.find((d) => d.name === 'nbt-01-r001-ct01')!;
    assert.equal(ct.bmc_url, 'http://127.40.0.5:8443');
    assert.equal(ct.provenance.source, 'netbox');
    const racks = await unwrap(api.GET('/v1/racks', { params: { query: { site_id: ['nbt-01'] } } }));
    assert.deepEqual(
      racks.items.map((r) => [r.device_count, r.rack_type]),
      [[35, 'gb200_nvl72']],
    );
    // Switch trays carry their NVOS endpoints from the fleet_nvos_* custom fields.
    const sw = list.find((d) => d.name === 'nbt-01-r001-nvsw01')!;
    assert.deepEqual([sw.nvos_url, sw.nvos_ssh], ['http://127.40.0.15:8444', '127.40.0.15:8445']);
    assert.equal(list.filter((d) => d.nvos_url).length, 9);
  });

  it('a malformed NVOS endpoint in NetBox becomes an inventory issue, and clears once fixed', async () => {
    const nbId = netboxId((await devices()).find((d) => d.name === 'nbt-01-r001-nvsw02')!);
    const issues = async () =>
      (await device((await devices()).find((d) => d.name === 'nbt-01-r001-nvsw02')!.id)).inventory_issues.map(
        (i) => i.code,
      );
    await writer.call('PATCH', `/api/dcim/devices/${nbId}/`, {
      custom_fields: { fleet_nvos_ssh: 'switch-without-port' },
    });
    await eventually('invalid NVOS endpoint', issues, (codes) => codes.includes('invalid_nvos_endpoint'));
    await writer.call('PATCH', `/api/dcim/devices/${nbId}/`, { custom_fields: { fleet_nvos_ssh: '127.40.0.16:8445' } });
    await eventually('fixed NVOS endpoint', issues, (codes) => !codes.includes('invalid_nvos_endpoint'));
  });

  it('a device changed in NetBox changes in the hub within a sync interval', async () => {
    const nbId = netboxId((await devices()).find((d) => d.name === 'nbt-01-r001-ct02')!);
    await writer.call('PATCH', `/api/dcim/devices/${nbId}/`, { serial: 'CHANGED-1', status: 'failed' });
    const d = await eventually(
      'change',
      async () => (await devices()).find((x) => x.name === 'nbt-01-r001-ct02')!,
      (x) => x.serial === 'CHANGED-1',
    );
    assert.equal(d.lifecycle_state, 'failed');
    assert.equal(d.node_type, 'compute_gb200_nvidia', 'an incremental sync keeps what the device type says');
  });

  it('a device created in NetBox appears; one without a BMC address carries an inventory issue', async () => {
    const site = (await writer.call<{ results: { id: number }[] }>('GET', '/api/dcim/sites/?slug=nbt-01')).results[0]!
      .id;
    const type = (
      await writer.call<{ results: { id: number }[] }>('GET', '/api/dcim/device-types/?slug=compute-gb200-nvidia')
    ).results[0]!.id;
    const role = (await writer.call<{ results: { id: number }[] }>('GET', '/api/dcim/device-roles/?slug=compute-tray'))
      .results[0]!.id;
    await writer.call('POST', '/api/dcim/devices/', {
      name: 'nbt-spare-01',
      site,
      device_type: type,
      role,
      status: 'inventory',
      custom_fields: { fleet_credential_ref: 'bmc/default' },
    });
    const spare = await eventually(
      'create',
      async () => (await devices()).find((x) => x.name === 'nbt-spare-01'),
      (x) => x !== undefined,
    );
    const detail = await device(spare!.id);
    assert.equal(detail.bmc_url, null);
    assert.deepEqual(
      detail.inventory_issues.map((i) => i.code),
      ['missing_bmc_address'],
    );
  });

  it('a duplicate IP becomes an issue on both devices and neither is operated', async () => {
    const list = await devices();
    const victim = list.find((d) => d.name === 'nbt-01-r001-ct03')!;
    const other = list.find((d) => d.name === 'nbt-01-r001-ct04')!;
    const ifaces = await writer.call<{ results: { id: number }[] }>(
      'GET',
      `/api/dcim/interfaces/?device_id=${netboxId(other)}&name=bmc`,
    );
    const victimIp = (await device(victim.id)).addresses[0]!.address;
    // NetBox refuses duplicates in its global table, but not across VRFs, which is how they happen.
    const vrf = await writer.call<{ id: number }>('POST', '/api/ipam/vrfs/', { name: 'oob-b', enforce_unique: false });
    await writer.call('POST', '/api/ipam/ip-addresses/', {
      address: victimIp,
      vrf: vrf.id,
      status: 'active',
      assigned_object_type: 'dcim.interface',
      assigned_object_id: ifaces.results[0]!.id,
    });
    const flagged = await eventually(
      'duplicate',
      () => device(victim.id),
      (x) => x.inventory_issues.some((i) => i.code === 'duplicate_ip'),
    );
    // The sync commits the issue and the cleared BMC URL together, and the detail reads both in one snapshot.
    assert.equal(flagged.bmc_url, null);
    const o = await device(other.id);
    assert.ok(o.inventory_issues.some((i) => i.code === 'duplicate_ip'));
  });

  it('a device deleted in NetBox disappears from the hub within a sync interval', async () => {
    const gone = (await devices()).find((d) => d.name === 'nbt-01-r001-ct05')!;
    await writer.call('DELETE', `/api/dcim/devices/${netboxId(gone)}/`);
    await eventually('delete', devices, (l) => !l.some((d) => d.name === 'nbt-01-r001-ct05'));
  });

  it(
    'with NetBox stopped the hub still serves, marked stale; when NetBox is back the mark clears',
    { timeout: 180_000 },
    async () => {
      await netbox.stop();
      const stale = await eventually('stale', sites, (s) => s.sync?.stale === true);
      assert.match(stale.sync?.last_error ?? '', /NetBox/);
      const list = await devices();
      assert.equal(list.length, 35, 'the last state is still served');
      assert.ok(list.every((d) => d.provenance.source === 'netbox' && d.provenance.stale));
      await netbox.restart();
      // The agent backs off while NetBox is down; allow for its longest wait.
      await eventually('fresh again', sites, (s) => s.sync?.stale === false, 120_000);
    },
  );

  it('a bad token gives a clear error and a metric, and the agent keeps running', async () => {
    await badAgent.start('netbox agent started');
    const port = Number(badAgent.output.match(/"metricsPort":(\d+)/)![1]);
    const metrics = await eventually(
      'auth error metric',
      async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text(),
      (text) => /fleet_netbox_sync_errors_total\{reason="auth"\} [1-9]/.test(text),
    );
    assert.match(metrics, /fleet_netbox_sync_lag_seconds/);
    // The metric can be scraped before the log line has made it through the pipe.
    await eventually(
      'auth error logged',
      async () => badAgent.output,
      (out) => /NetBox rejected the API token \(40[13]\)/.test(out),
    );
    assert.equal(badAgent.child!.exitCode, null, 'no crash loop: still running');
  });
});

import { randomBytes, randomInt } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  createFleetClient,
  createUncheckedClient,
  unwrap,
  type FleetClient,
  type Job,
  type paths,
} from '@fleet/client';
import {
  connectDb,
  createApiToken,
  devices,
  setBmcUrls,
  upsertDevices,
  upsertRacks,
  upsertSites,
  type DbHandle,
} from '@fleet/db';
import { planFleet, simulatorProfile, type Fleet } from '../../tools/fleetgen/layout.js';
import { mirrorDeviceRow } from '../../tools/fleetgen/mirror-rows.js';
import { cloneTestDatabase, type TestDatabase } from '@fleet/db/testing';
import { fleetDataConverter, freePort, startTemporalDevServer, type DevServer } from '@fleet/temporal';
import { Client, Connection } from '@temporalio/client';
import { EncryptionCodec, openPayloadKeys, randomKeyRingDocument } from '@fleet/temporal/codec';
import { twoPersonRules } from '@fleet/hub';
import { defaultProcessMode, ManagedProcess, repoRoot, type ProcessMode } from '../../tools/lib/processes.js';
import { createCa, loopbackServer, type CertificateAuthority } from '@fleet/simulators/pki';
import { generatedBmcs } from '@fleet/simulators/config';
import { startTemporalTlsProxy, type TemporalTlsProxy } from '../../tools/lib/temporal-tls-proxy.js';
import { LinkProxy } from './link-proxy.js';
import { Agent, setGlobalDispatcher } from 'undici';
import { recordHistories } from './record-histories.js';
import { logFilesUnder, recordLeakScan, scanForLeaks, type LeakScanReport, type Needle } from './leak-scan.js';
import { startTestCluster, type TestCluster } from '../../packages/slurm/test/cluster.js';
import { NetboxWriter, writeFleet } from '../../tools/fleetgen/netbox-writer.js';
import { startNetbox, type NetboxServer } from './netbox.js';
import { PrivatePostgres } from './private-postgres.js';
import { testEnv } from './env.js';

export interface StackOptions {
  /** Quarantine rules and blast radius (hub) and step verification timings (agent), docs/day2.md. */
  remediation?: {
    hub?: Record<string, unknown>;
    agent?: { verifyTimeoutS?: number; verifyPollS?: number; acOffFloorS?: number; acPollS?: number };
  };
  /** The site's health observer (docs/day2.md); off unless given, so tests see only the requests they make. */
  observe?: { intervalS: number; confirmations?: number; concurrency?: number; runForS?: number; checkEveryS?: number };
  /** Simulated compute trays per site (plain BMCs, without `racks`). */
  bmcs?: number;
  /**
   * Sites, each with its own satellite (config, secret store, satellite token), its share of the simulator's BMCs and
   * its `racks`; `siteId` is the first. One unless given.
   */
  sites?: number;
  /**
   * At most this many satellite processes, the sites dealt to them in turn, each running its sites' workers (one
   * `--config` per site). A deployment runs a satellite per site, the default here too; a bench on a few cores shares
   * them (issue 20, docs/scale.md).
   */
  satelliteProcesses?: number;
  /**
   * Plain `bmcs` go into Postgres a thousand rows a statement (the rows POST /v1/devices writes, less its audit rows)
   * rather than one POST each: benches with 10,000 devices.
   */
  bulkRegister?: boolean;
  /** Satellite Redfish settings (config `redfish`) over the stack's short timeouts, e.g. a site's production ones. */
  redfish?: {
    requestTimeoutMs?: number;
    connectTimeoutMs?: number;
    siteConcurrency?: number;
    settleWaitFraction?: number;
  };
  /**
   * The hub on HTTPS with a certificate from the stack's own CA (@fleet/simulators/pki), trusted by the satellite and
   * by this test process; plain HTTP (the dev flag) otherwise.
   */
  tls?: boolean;
  /** The hub's per-token rate limit (config `rateLimit`); benches that poll hard turn it off. */
  rateLimit?: { enabled: boolean; perSecond?: number; burst?: number };
  /**
   * A simulator process per site, each serving its site's BMCs (the first also the switches), rather than one for the
   * stack: benches with thousands of devices per site (issue 20), where one process would be CPU-bound.
   */
  simulatorPerSite?: boolean;
  /**
   * With `simulatorPerSite`: at most this many simulator processes, the sites with BMCs dealt to them in turn. Each
   * process costs CPU of its own for the same requests (the scale bench: docs/scale.md), so a bench on a few cores
   * shards by cores, not by sites.
   */
  simulatorProcesses?: number;
  /** Quirks (simulators' redfish/quirks.ts) every simulated BMC has, e.g. `noExpandQuery` for a baseline. */
  bmcQuirks?: { noExpandQuery?: boolean; noEventService?: boolean };
  /** Simulator time scale: 0.01 makes a 30 s power-on take 0.3 s. */
  timeScale?: number;
  /** Keep Temporal's state in a file, so a test can stop and restart it. */
  persistentTemporal?: boolean;
  /**
   * The stack's database in a PostgreSQL cluster of its own (test/harness/private-postgres.ts) rather than a clone on
   * the machine's shared server, so that a test can kill -9 and restart it: `stack.postgres`. NetBox, with `netbox`,
   * stays on the shared server.
   */
  privatePostgres?: boolean;
  power?: { heartbeatTimeoutS?: number; settleTimeoutS?: number; maximumAttempts?: number };
  projectionIntervalMs?: number;
  /** The workflow agent's projection.sweepMaxDuty (its default when absent). */
  sweepMaxDuty?: number;
  pollIntervalMs?: number;
  /** Seconds the satellite lets running activities finish on SIGTERM. */
  shutdownGraceTimeS?: number;
  /** NVL72 racks (35 devices each, power domains wired) instead of `bmcs` plain compute trays. */
  racks?: number;
  /** Simulator timings in seconds before timeScale (see the simulator's Timings). */
  timings?: Record<string, number>;
  /** Workflow agent firmware timings (seconds), shortened for simulated trays. */
  firmware?: Record<string, number>;
  /** Simulated NVLink switches running NVOS beside the BMCs, registered as switch trays with their NVOS endpoints. */
  switches?: number;
  /** NVOS simulator timings in seconds before timeScale (see the simulator's NvosTimings). */
  nvosTimings?: Record<string, number>;
  /** Satellite NVOS settings (config `nvos`), e.g. a short SFTP step timeout. */
  nvos?: Record<string, unknown>;
  /** Workflow agent NVOS install timings (config `nvos`, seconds). */
  nvosInstall?: Record<string, number>;
  /**
   * Burn-in: a single-node SLURM of this stack's own (tools/slurm/start.sh), and the satellite's `burnIn` section with
   * the simulated site's job scripts asking the site's simulator.
   */
  burnIn?: { startDeadlineS?: number; pollIntervalMs?: number };
  /** Workflow agent enrolment settings (config `enrolment`). */
  enrolment?: Record<string, unknown>;
  /** Workflow agent stuck-state SLAs and webhooks (config `sla`, docs/sla.md); the agent's defaults when absent. */
  sla?: Record<string, unknown>;
  /**
   * With `racks`: the racks go into a real NetBox (tools/fleetgen's writer) and the NetBox agent mirrors them, as on a
   * site, instead of straight into the mirror.
   */
  netbox?: boolean;
  /**
   * Temporal payload encryption (docs/security.md): a random key ring, in the satellite's secret store and in a key
   * file for the workflow agent and the hub; with more than one site, a ring per site (their `keyRingDir`), each
   * satellite holding only its own. On unless false, or while histories are recorded for the replay tests
   * (FLEET_RECORD_HISTORIES), which need them in clear.
   */
  payloadEncryption?: boolean;
  /**
   * At stop, the leak scan (test/harness/leak-scan.ts) over the stack's Temporal histories, database and logs; a
   * finding fails the stop. On unless false (benchmarks, whose thousands of histories are not what they measure).
   */
  leakScan?: boolean;
  /**
   * The satellite and the workflow agent reach Temporal over mTLS, through nginx in front of the dev server
   * (tools/lib/temporal-tls-proxy.ts), each with a client certificate of its own; plain gRPC otherwise.
   */
  temporalTls?: boolean;
  /**
   * The simulated BMCs serve HTTPS, each with a certificate of its own from the site's BMC CA, which the satellite
   * trusts (`redfish.tls.caFile`); plain HTTP otherwise.
   */
  bmcTls?: boolean;
  /**
   * The first site's satellite reaches Temporal through a link a test can cut: `stack.satelliteLink`; with
   * 'all-sites', every site's satellite through a link of its own: `stack.satelliteLinks`.
   */
  satelliteLink?: boolean | 'all-sites';
  /** Hub replicas: processes of one config and database, each on its own port (`stack.hubUrls`). One unless given. */
  hubs?: number;
  /**
   * How the stack's processes run (tools/lib/processes.ts): from the sources through tsx, or from `pnpm build`'s
   * output with plain node, the satellite with the workflow bundle the build made. FLEET_PROCESS_MODE, else tsx.
   */
  mode?: ProcessMode;
}

type Role = 'admin' | 'operator' | 'viewer';
/** The body of POST /v1/devices. */
export type NewDevice = paths['/v1/devices']['post']['requestBody']['content']['application/json'];

export interface SimBmc {
  id: string;
  url: string;
}

/** A simulated switch as the simulator's admin API lists it. */
export interface SimSwitch {
  id: string;
  nvueUrl: string;
  ssh: { host: string; port: number };
  hostKeySha256: string;
}

/**
 * A whole Fleet stack as separate real processes: Temporal dev server, a fresh
 * Postgres database, the hub, the workflow agent, a satellite per site (one site unless
 * `sites` says more) and the Redfish simulator. Tests talk to it over HTTP like an operator would.
 */
export class Stack {
  private readonly sitePrefix = `s${randomBytes(3).toString('hex')}`;
  /** The fleet generator names sites <prefix>-01, <prefix>-02, ... */
  readonly siteIds: string[];
  /** The first site: the only one unless `sites` says more. */
  readonly siteId: string;
  /** With `racks`, the NVL72 layout the stack registered (devices by name). */
  fleet: Fleet | undefined;
  readonly bmcPassword = `pw-${randomBytes(12).toString('hex')}`;
  readonly switchPassword = `nvos-${randomBytes(12).toString('hex')}`;
  readonly dir: string;
  /** The first hub replica's URL. */
  hubUrl = '';
  /** Every hub replica's URL, the first is `hubUrl`. */
  hubUrls: string[] = [];
  simAdminUrl = '';
  temporal!: DevServer;
  /** With `temporalTls`, the mTLS front the satellite and the agent connect through. */
  temporalTlsProxy: TemporalTlsProxy | undefined;
  /** With `satelliteLink`, each linked site's cuttable path to Temporal, by site id. */
  readonly satelliteLinks = new Map<string, LinkProxy>();
  /** With `satelliteLink`, the first site's satellite's cuttable path to Temporal. */
  get satelliteLink(): LinkProxy | undefined {
    return this.satelliteLinks.get(this.siteId);
  }
  database!: TestDatabase;
  /** With `privatePostgres`, the stack's own cluster. */
  postgres: PrivatePostgres | undefined;
  dbHandle!: DbHandle;
  tokens!: Record<Role, string>;
  /** The first site's satellite token: role satellite, limited to that site. */
  satelliteToken!: string;
  /** Each site's satellite token; startSatellite starts one for any site given its token here. */
  readonly satelliteTokens = new Map<string, string>();
  /** The first hub replica. */
  hub!: ManagedProcess;
  /** Every hub replica, the first is `hub`. */
  readonly hubs: ManagedProcess[] = [];
  agent!: ManagedProcess;
  /** The first site's satellite. */
  satellite!: ManagedProcess;
  /** Every site's satellite, by site id (with `satelliteProcesses`, sites share one). */
  readonly satellites = new Map<string, ManagedProcess>();
  /** Every satellite process, each once. */
  get satelliteProcesses(): ManagedProcess[] {
    return [...new Set(this.satellites.values())];
  }
  /** The (first) simulator process. */
  simulator!: ManagedProcess;
  /** Every simulator process: one, or with `simulatorPerSite` one per site or `simulatorProcesses` of them. */
  readonly simulators: ManagedProcess[] = [];
  /** Each site's simulator admin API (`simAdminUrl` is the first site's). */
  readonly simAdminUrls = new Map<string, string>();
  /** The admin API of the simulator serving each BMC, by BMC id. */
  private readonly bmcAdminUrls = new Map<string, string>();
  /** The site each BMC belongs to, by BMC id. */
  private readonly bmcSites = new Map<string, string>();
  bmcs: SimBmc[] = [];
  switches: SimSwitch[] = [];
  /** With `burnIn`, the stack's SLURM. */
  slurm: TestCluster | undefined;
  /** With `netbox`, the NetBox the racks are in, and its agent. */
  netbox: NetboxServer | undefined;
  netboxAgent: ManagedProcess | undefined;
  /** The first start's ports (the dev server picks them), which restarts keep. */
  private temporalPorts: { port: number; uiPort: number } | undefined;
  /** With `payloadEncryption`, the key ring document and its file. */
  keyRing: { document: string; file: string } | undefined;
  /** With payload encryption and more than one site: each site's ring document, in `<keyRingDir>/<siteId>.json`. */
  readonly siteKeyRings = new Map<string, string>();
  private keyRingDir: string | undefined;

  readonly mode: ProcessMode;

  constructor(readonly opts: StackOptions = {}) {
    this.siteIds = Array.from(
      { length: opts.sites ?? 1 },
      (_, i) => `${this.sitePrefix}-${String(i + 1).padStart(2, '0')}`,
    );
    this.siteId = this.siteIds[0]!;
    this.mode = opts.mode ?? defaultProcessMode();
    this.dir = join(repoRoot, '.run', 'tests', `${Date.now()}-${this.siteId}`);
  }

  get temporalDbFile(): string | undefined {
    return this.opts.persistentTemporal ? join(this.dir, 'temporal.sqlite') : undefined;
  }

  async start(): Promise<this> {
    mkdirSync(this.dir, { recursive: true });
    if (this.opts.payloadEncryption ?? !process.env['FLEET_RECORD_HISTORIES']) {
      if (this.siteIds.length > 1) {
        this.keyRingDir = join(this.dir, 'temporal-payload-keys');
        for (const site of this.siteIds) this.siteKeyRing(site);
      } else {
        this.keyRing = { document: randomKeyRingDocument(), file: join(this.dir, 'temporal-payload-keys.json') };
        writeFileSync(this.keyRing.file, this.keyRing.document, { mode: 0o600 });
      }
    }
    const env = testEnv();
    await this.startTemporal();
    if (this.opts.temporalTls)
      this.temporalTlsProxy = await startTemporalTlsProxy({ dir: this.dir, target: this.temporal.address });
    const linked =
      this.opts.satelliteLink === 'all-sites' ? this.siteIds : this.opts.satelliteLink ? [this.siteId] : [];
    for (const site of linked)
      this.satelliteLinks.set(site, await LinkProxy.start(this.temporalTlsProxy?.address ?? this.temporal.address));
    this.database = this.opts.privatePostgres
      ? await this.privateDatabase()
      : await cloneTestDatabase(env.databaseUrl, env.templateDb);
    this.dbHandle = connectDb(this.database.url, 2);
    this.tokens = {
      admin: (await createApiToken(this.dbHandle.db, 'test-admin', 'admin')).token,
      operator: (await createApiToken(this.dbHandle.db, 'test-operator', 'operator')).token,
      viewer: (await createApiToken(this.dbHandle.db, 'test-viewer', 'viewer')).token,
    };
    for (const [i, site] of this.siteIds.entries()) {
      const name = i === 0 ? 'test-satellite' : `test-satellite-${site}`;
      this.satelliteTokens.set(
        site,
        (await createApiToken(this.dbHandle.db, name, 'satellite', { sites: [site] })).token,
      );
    }
    this.satelliteToken = this.satelliteTokens.get(this.siteId)!;
    await Promise.all([
      this.startSimulator(),
      this.startHubs(),
      this.opts.burnIn ? startTestCluster().then((c) => (this.slurm = c)) : undefined,
    ]);
    await this.startAgent();
    await this.startSatellites();
    await this.registerDevices();
    return this;
  }

  private async privateDatabase(): Promise<TestDatabase> {
    const cluster = (this.postgres = await PrivatePostgres.create('fleet'));
    return { name: 'fleet', url: cluster.url('fleet'), drop: () => cluster.destroy() };
  }

  async startTemporal(): Promise<void> {
    this.temporal = await startTemporalDevServer({
      ...this.temporalPorts,
      ...(this.temporalDbFile ? { dbFile: this.temporalDbFile } : {}),
    });
    this.temporalPorts ??= { port: this.temporal.port, uiPort: this.temporal.uiPort };
  }

  /** A site's payload key ring document: the stack's one ring, or the site's own (made on first use) per site. */
  private siteKeyRing(siteId: string): string | undefined {
    if (!this.keyRingDir) return this.keyRing?.document;
    let document = this.siteKeyRings.get(siteId);
    if (!document) {
      // Key ids are unique across sites (SiteKeyRings).
      this.siteKeyRings.set(siteId, (document = randomKeyRingDocument(`${siteId}-k1`)));
      mkdirSync(this.keyRingDir, { recursive: true, mode: 0o700 });
      writeFileSync(join(this.keyRingDir, `${siteId}.json`), document, { mode: 0o600 });
    }
    return document;
  }

  /** Where the agent and the hub find the payload keys (their config's keyRingFile or keyRingDir), if encrypting. */
  private get payloadKeyConfig(): { keyRingFile: string } | { keyRingDir: string } | undefined {
    if (this.keyRingDir) return { keyRingDir: this.keyRingDir };
    return this.keyRing && { keyRingFile: this.keyRing.file };
  }

  /** A codec that reads every site's payloads, as the agent does. */
  private async readingCodec(): Promise<EncryptionCodec | undefined> {
    const keys = this.payloadKeyConfig;
    return keys && new EncryptionCodec((await openPayloadKeys(keys)).anySite());
  }

  /** The config section `temporal` of a process: the mTLS front and a client certificate named `client` with it. */
  private temporalSection(client: string, extra: Record<string, unknown>) {
    const proxy = this.temporalTlsProxy;
    return proxy
      ? { address: proxy.address, tls: proxy.clientTls(client), ...extra }
      : { address: this.temporal.address, ...extra };
  }

  private writeConfig(name: string, config: unknown): string {
    const file = join(this.dir, `${name}.json`);
    writeFileSync(file, JSON.stringify(config, null, 2));
    return file;
  }

  private async startSimulator(): Promise<void> {
    const port = await freePort();
    // A random 127.x.y.0/24 block per stack keeps parallel test files apart; switches take the block after it.
    const [x, y] = [randomInt(2, 250), randomInt(0, 200)];
    const block = `127.${x}.${y}`;
    if (this.opts.racks) {
      this.fleet = planFleet({
        sites: this.siteIds.length,
        racksPerSite: this.opts.racks,
        rackTypes: ['gb200_nvl72'],
        firstAddress: `${block}.1`,
        sitePrefix: this.sitePrefix,
      });
    }
    const credentials = { port, username: 'admin', password: this.bmcPassword };
    const perSite = this.opts.bmcs ?? 2;
    // Each BMC with the site it belongs to: a rack's, or plain BMCs dealt out to the sites in equal runs.
    const bmcs: { site: string; spec: Record<string, unknown> }[] = this.fleet
      ? this.fleet.devices.map((d) => ({
          site: d.site,
          spec: {
            id: d.name,
            address: d.ip,
            ...credentials,
            profile: simulatorProfile(d),
            powerDomain: `${d.site}/${d.rack}`,
            // The hardware reports the serial NetBox holds, as a correctly recorded rack does.
            serialNumber: d.serial,
          },
        }))
      : generatedBmcs({
          count: perSite * this.siteIds.length,
          idPrefix: 'bmc-',
          firstAddress: `${block}.1`,
          ...credentials,
        }).map((spec, i) => ({ site: this.siteIds[Math.floor(i / perSite)]!, spec }));
    for (const b of bmcs) {
      this.bmcSites.set(b.spec['id'] as string, b.site);
      if (this.opts.bmcQuirks) b.spec['quirks'] = this.opts.bmcQuirks;
    }
    const [nvuePort, sshPort] = [await freePort(), await freePort()];
    const switches = Array.from({ length: this.opts.switches ?? 0 }, (_, i) => ({
      id: `sw-${String(i + 1).padStart(4, '0')}`,
      address: `127.${x}.${y + 1}.${i + 1}`,
      nvuePort,
      sshPort,
      username: 'admin',
      password: this.switchPassword,
      nvosVersion: '25.02.4282',
    }));
    if (this.opts.bmcTls) {
      const pki = join(this.dir, 'pki');
      mkdirSync(pki, { recursive: true });
      this.bmcCa = createCa(pki, 'site-bmc-ca');
    }
    // One process for the stack, or one per site with BMCs (the first also serving the switches), in site order, or
    // with `simulatorProcesses` that many, each serving the sites dealt to it.
    const simulatorSites = this.opts.simulatorPerSite
      ? this.siteIds.filter((site, i) => i === 0 || bmcs.some((b) => b.site === site))
      : [];
    const processes = processCount('simulatorProcesses', this.opts.simulatorProcesses, simulatorSites.length);
    const shards = simulatorSites.length
      ? dealInTurn(simulatorSites, processes).map((sites, i) => ({
          sites,
          name: shardName('simulator', i, sites, processes === simulatorSites.length),
        }))
      : [{ sites: undefined, name: 'simulator' }];
    const startShard = async ({ sites, name }: (typeof shards)[number], i: number) => {
      const own = bmcs.filter((b) => sites === undefined || sites.includes(b.site)).map((b) => b.spec);
      const adminPort = await freePort();
      const file = this.writeConfig(name, {
        log: { level: 'info' },
        ...(this.bmcCa ? { bmcTls: { caCertFile: this.bmcCa.certFile, caKeyFile: this.bmcCa.keyFile } } : {}),
        timeScale: this.opts.timeScale ?? 0.01,
        ...(this.opts.timings ? { timings: this.opts.timings } : {}),
        ...(this.opts.nvosTimings ? { nvosTimings: this.opts.nvosTimings } : {}),
        admin: { port: adminPort },
        bmcs: own,
        switches: i === 0 ? switches : [],
      });
      const simulator = new ManagedProcess(name, 'packages/simulators/src/main.ts', file, this.dir, {}, this.mode);
      this.simulators[i] = simulator;
      // Thousands of BMCs take a while to listen (the shards share the cores: the budget counts every BMC); a few
      // hundred are ready well within the minute.
      await simulator.start('redfish simulator ready', Math.max(60_000, bmcs.length * 20));
      const adminUrl = `http://127.0.0.1:${adminPort}`;
      const list = (await (await fetch(`${adminUrl}/bmcs`)).json()) as { items: SimBmc[] };
      return { sites, adminUrl, bmcs: list.items };
    };
    // Shards issuing BMC certificates from one CA would race on its serial file: those start one after another.
    const started: Awaited<ReturnType<typeof startShard>>[] = [];
    if (this.bmcCa) for (const [i, shard] of shards.entries()) started.push(await startShard(shard, i));
    else started.push(...(await Promise.all(shards.map(startShard))));
    this.simulator = this.simulators[0]!;
    this.simAdminUrl = started[0]!.adminUrl;
    for (const site of this.siteIds) this.simAdminUrls.set(site, this.simAdminUrl);
    for (const shard of started) {
      for (const site of shard.sites ?? []) this.simAdminUrls.set(site, shard.adminUrl);
      for (const bmc of shard.bmcs) this.bmcAdminUrls.set(bmc.id, shard.adminUrl);
    }
    this.bmcs = started.flatMap((s) => s.bmcs);
    this.switches = ((await (await fetch(`${this.simAdminUrl}/switches`)).json()) as { items: SimSwitch[] }).items;
  }

  /** With `bmcTls`: the CA of the site's BMC certificates. */
  bmcCa: CertificateAuthority | undefined;

  /** With `tls`: the stack's CA, and the hub's certificate from it. */
  ca: CertificateAuthority | undefined;
  private hubTls: { certFile: string; keyFile: string } | undefined;

  private async startHubs(): Promise<void> {
    await Promise.all(Array.from({ length: this.opts.hubs ?? 1 }, (_, i) => this.startHub(i)));
    this.hub = this.hubs[0]!;
    this.hubUrl = this.hubUrls[0]!;
  }

  /** Hub replica `index`: the first is named `hub` (config, log), the others `hub-<n>`. */
  private async startHub(index: number): Promise<void> {
    const port = await freePort();
    const name = index === 0 ? 'hub' : `hub-${index + 1}`;
    if (this.opts.tls && !this.ca) {
      const pki = join(this.dir, 'pki');
      mkdirSync(pki, { recursive: true });
      ({ ca: this.ca, tls: this.hubTls } = loopbackServer(pki, 'stack-ca'));
      // This process's fetch (the API helpers, the typed client) trusts the stack's CA, as an operator's would.
      setGlobalDispatcher(new Agent({ connect: { ca: this.ca.certPem } }));
    }
    const file = this.writeConfig(name, {
      log: { level: 'info' },
      metrics: { port: 0 },
      database: { url: this.database.url, poolSize: 5 },
      http: { port, shutdownGraceS: 5, ...(this.hubTls ? { tls: this.hubTls } : { allowPlainHttp: true }) },
      temporalUiUrl: `http://127.0.0.1:${this.temporal.uiPort}`,
      ...(this.payloadKeyConfig ? { temporalPayloadEncryption: this.payloadKeyConfig } : {}),
      firmware: { blobDir: join(this.dir, 'blobs') },
      ...(this.opts.remediation?.hub ? { remediation: this.opts.remediation.hub } : {}),
      ...(this.opts.rateLimit ? { rateLimit: this.opts.rateLimit } : {}),
      // The end-to-end tests act as one person; two-person rules have their own tests (apps/hub/test).
      twoPerson: { rules: Object.fromEntries(twoPersonRules.map((rule) => [rule, false])) },
    });
    const hub = new ManagedProcess(name, 'apps/hub/src/main.ts', file, this.dir, {}, this.mode);
    this.hubs[index] = hub;
    await hub.start('hub listening');
    this.hubUrls[index] = `${this.hubTls ? 'https' : 'http'}://127.0.0.1:${port}`;
  }

  async startAgent(): Promise<void> {
    const file = this.writeConfig('agent', {
      log: { level: 'info' },
      metrics: { port: 0 },
      database: { url: this.database.url, poolSize: 5 },
      temporal: this.temporalSection(
        'workflow-agent',
        this.payloadKeyConfig ? { payloadEncryption: this.payloadKeyConfig } : {},
      ),
      dispatch: { idleIntervalMs: 200, maxRetryS: 2 },
      projection: {
        intervalMs: this.opts.projectionIntervalMs ?? 200,
        ...(this.opts.sweepMaxDuty !== undefined ? { sweepMaxDuty: this.opts.sweepMaxDuty } : {}),
      },
      // Satellite liveness and drained-site removal, checked often so tests see them soon.
      sites: { checkEveryS: 1 },
      power: {
        heartbeatTimeoutS: this.opts.power?.heartbeatTimeoutS ?? 10,
        settleTimeoutS: this.opts.power?.settleTimeoutS ?? 60,
        maximumAttempts: this.opts.power?.maximumAttempts ?? 5,
      },
      ...(this.opts.firmware ? { firmware: this.opts.firmware } : {}),
      ...(this.opts.nvosInstall ? { nvos: this.opts.nvosInstall } : {}),
      ...(this.opts.enrolment ? { enrolment: this.opts.enrolment } : {}),
      ...(this.opts.sla ? { sla: this.opts.sla } : {}),
      observation: this.opts.observe ? { checkEveryS: 1, ...this.opts.observe } : { enabled: false },
      ...(this.opts.remediation?.agent ? { remediation: this.opts.remediation.agent } : {}),
    });
    this.agent ??= new ManagedProcess('agent', 'apps/workflow-agent/src/main.ts', file, this.dir, {}, this.mode);
    await this.agent.start('workflow agent started');
  }

  /** Starts every site's satellite: one process per site, or the sites dealt to `satelliteProcesses` of them. */
  private async startSatellites(): Promise<void> {
    const processes = processCount('satelliteProcesses', this.opts.satelliteProcesses, this.siteIds.length);
    if (processes === this.siteIds.length) {
      await Promise.all(this.siteIds.map((site) => this.startSatellite(site)));
      return;
    }
    const groups = dealInTurn(this.siteIds, processes);
    await Promise.all(
      groups.map(async (sites, i) => {
        const files = await Promise.all(sites.map((site) => this.writeSatelliteConfig(site)));
        const name = shardName('satellite', i, sites, false);
        const satellite = new ManagedProcess(name, 'apps/satellite/src/main.ts', files, this.dir, {}, this.mode);
        for (const site of sites) this.satellites.set(site, satellite);
        if (i === 0) this.satellite = satellite;
        await satellite.start('satellite worker started');
      }),
    );
  }

  /**
   * Starts (or restarts) a site's satellite, the first site's unless named, with the site's token from
   * `satelliteTokens`; each site has its own config, secret store and data under the stack's folder. A
   * `workflowBundlePath` runs that workflow code instead of the test run's (an upgrade to another version of it). With
   * `satelliteProcesses`, the process the site shares is (re)started.
   */
  async startSatellite(
    siteId = this.siteId,
    { workflowBundlePath }: { workflowBundlePath?: string } = {},
  ): Promise<void> {
    const file = await this.writeSatelliteConfig(siteId, workflowBundlePath);
    const first = siteId === this.siteId;
    let satellite = this.satellites.get(siteId);
    if (!satellite) {
      const name = first ? 'satellite' : `satellite-${siteId}`;
      satellite = new ManagedProcess(name, 'apps/satellite/src/main.ts', file, this.dir, {}, this.mode);
      this.satellites.set(siteId, satellite);
    }
    if (first) this.satellite = satellite;
    await satellite.start('satellite worker started');
  }

  /** Writes a site's satellite config and secret store (a fresh events port each time); returns the config file. */
  private async writeSatelliteConfig(siteId: string, workflowBundlePath?: string): Promise<string> {
    const first = siteId === this.siteId;
    const token = this.satelliteTokens.get(siteId);
    if (!token) throw new Error(`no satellite token for site ${siteId} in stack.satelliteTokens`);
    const ring = this.siteKeyRing(siteId);
    const secrets = join(this.dir, first ? 'secrets.json' : `secrets-${siteId}.json`);
    const secretEntries = {
      'bmc/default': { username: 'admin', password: this.bmcPassword },
      'nvos/default': { username: 'admin', password: this.switchPassword },
      'hub/token': { username: 'satellite', password: token },
      ...(ring ? { 'temporal/payload-keys': { username: 'temporal', password: ring } } : {}),
    };
    writeFileSync(secrets, JSON.stringify(secretEntries), { mode: 0o600 });
    // From the build, the satellite loads the workflow bundle built beside it.
    const bundle = workflowBundlePath ?? (this.mode === 'tsx' ? testEnv().workflowBundle : undefined);
    // With the observer on, the BMCs push health events to the satellite's listener (docs/day2.md).
    const eventsPort = this.opts.observe ? await freePort() : undefined;
    return this.writeConfig(first ? 'satellite' : `satellite-${siteId}`, {
      siteId,
      log: { level: 'info' },
      metrics: { port: 0 },
      temporal: {
        ...this.temporalSection(
          `satellite-${siteId}`,
          ring ? { payloadEncryption: { keyRingRef: 'temporal/payload-keys' } } : {},
        ),
        ...(this.satelliteLinks.has(siteId) ? { address: this.satelliteLinks.get(siteId)!.address } : {}),
      },
      secrets: { provider: 'file', path: secrets },
      hub: { url: this.hubUrl, tokenRef: 'hub/token', ...(this.ca ? { caFile: this.ca.certFile } : {}) },
      artifacts: { dir: join(this.dir, first ? 'artifacts' : `artifacts-${siteId}`) },
      dataDir: join(this.dir, first ? 'satellite-data' : `satellite-data-${siteId}`),
      ...(this.opts.nvos ? { nvos: this.opts.nvos } : {}),
      ...(this.slurm ? { burnIn: this.burnInConfig(this.slurm, siteId) } : {}),
      ...(eventsPort
        ? {
            events: {
              listen: { host: '127.0.0.1', port: eventsPort },
              publicUrl: `http://127.0.0.1:${eventsPort}/events`,
            },
          }
        : {}),
      worker: {
        shutdownGraceTimeS: this.opts.shutdownGraceTimeS ?? 5,
        ...(bundle && existsSync(bundle) ? { workflowBundlePath: bundle } : {}),
      },
      redfish: {
        pollIntervalMs: this.opts.pollIntervalMs ?? 100,
        requestTimeoutMs: 5_000,
        connectTimeoutMs: 2_000,
        ...(this.bmcCa ? { tls: { caFile: this.bmcCa.certFile } } : {}),
        ...this.opts.redfish,
      },
    });
  }

  private burnInConfig(c: TestCluster, siteId: string) {
    return {
      slurm: { url: c.url, user: c.user, tokenFile: c.tokenFile, partition: c.partition },
      outputDir: c.jobsDir,
      timeLimitsMin: { gpu_stress: 2, memory: 2, nvlink_allreduce: 2 },
      startDeadlineS: this.opts.burnIn?.startDeadlineS ?? 300,
      pollIntervalMs: this.opts.burnIn?.pollIntervalMs ?? 300,
      site: { kind: 'simulated', simulatorUrl: this.simAdminUrls.get(siteId) ?? this.simAdminUrl },
    };
  }

  /** Racks go into the mirror the way the NetBox agent writes them (ids stand in for NetBox's). */
  private async registerFleet(fleet: Fleet): Promise<void> {
    const db = this.dbHandle.db;
    const ts = new Date().toISOString();
    const siteNetboxId = (site: string) => this.siteIds.indexOf(site) + 1;
    await upsertSites(
      db,
      this.siteIds.map((site) => ({
        netboxId: siteNetboxId(site),
        slug: site,
        name: site,
        status: 'active',
        netboxLastUpdated: ts,
      })),
    );
    await upsertRacks(
      db,
      fleet.racks.map((r, i) => ({
        netboxId: 100 + i,
        siteNetboxId: siteNetboxId(r.site),
        name: r.name,
        rackType: r.type,
        status: 'active',
        uHeight: 48,
        serial: null,
        netboxLastUpdated: ts,
      })),
    );
    const rackIds = new Map(fleet.racks.map((r, i) => [`${r.site}/${r.name}`, 100 + i]));
    const port = Number(new URL(this.bmcs[0]!.url).port);
    await upsertDevices(
      db,
      fleet.devices.map((d, i) =>
        mirrorDeviceRow(
          d,
          { netboxId: 1000 + i, siteNetboxId: siteNetboxId(d.site), rackNetboxId: rackIds.get(`${d.site}/${d.rack}`)! },
          `redfish-http:${port}`,
          ts,
        ),
      ),
    );
    await this.loadIds();
    await setBmcUrls(
      db,
      [...this.deviceIds].map(([name, deviceId]) => {
        const d = fleet.devices.find((x) => x.name === name)!;
        return { deviceId, bmcUrl: `${this.bmcCa ? 'https' : 'http'}://${d.ip}:${port}` };
      }),
    );
  }

  /** The mirrored devices' and racks' ids by name. */
  private async loadIds(): Promise<void> {
    const rows = async (table: 'devices' | 'racks') =>
      (await this.dbHandle.pool.query<{ id: string; name: string }>(`select id, name from ${table}`)).rows;
    for (const r of await rows('devices')) this.deviceIds.set(r.name, r.id);
    for (const r of await rows('racks')) this.rackIds.set(r.name, r.id);
  }

  readonly rackIds = new Map<string, string>();

  /** The racks into a real NetBox; the NetBox agent's first sync mirrors them, BMC URLs and serials included. */
  private async registerInNetbox(fleet: Fleet): Promise<void> {
    this.netbox = await startNetbox();
    const port = Number(new URL(this.bmcs[0]!.url).port);
    await writeFleet(new NetboxWriter(this.netbox.url, this.netbox.token), fleet, {
      managementProfile: `redfish-http:${port}`,
      credentialRef: 'bmc/default',
    });
    const tokenFile = join(this.dir, 'netbox-token');
    writeFileSync(tokenFile, this.netbox.token, { mode: 0o600 });
    const config = this.writeConfig('netbox-agent', {
      log: { level: 'info' },
      metrics: { port: 0 },
      database: { url: this.database.url, poolSize: 2 },
      netbox: { url: this.netbox.url, tokenFile },
      sync: { intervalS: 5 },
    });
    this.netboxAgent = new ManagedProcess(
      'netbox-agent',
      'apps/netbox-agent/src/main.ts',
      config,
      this.dir,
      {},
      this.mode,
    );
    await this.netboxAgent.start('netbox sync done', 180_000);
    await this.loadIds();
    if (this.deviceIds.size !== fleet.devices.length)
      throw new Error(`NetBox agent mirrored ${this.deviceIds.size} of ${fleet.devices.length} devices`);
  }

  private async registerDevices(): Promise<void> {
    if (this.fleet && this.opts.netbox) await this.registerInNetbox(this.fleet);
    else if (this.fleet) await this.registerFleet(this.fleet);
    else await this.registerBmcs();
    for (const sw of this.switches) {
      const body = this.switchDevice(sw, `${this.siteId}-${sw.id}`);
      const device = await unwrap(this.client('admin').POST('/v1/devices', { body }));
      this.deviceIds.set(sw.id, device.id);
    }
  }

  /** POST /v1/devices body for a simulated switch: a switch tray with its NVOS endpoints (its BMC is not simulated). */
  switchDevice(sw: SimSwitch, name: string, extra: Partial<NewDevice> = {}): NewDevice {
    return {
      name,
      site_id: this.siteId,
      node_type: 'switch_gb200_nvidia',
      bmc_url: `https://${sw.ssh.host}`,
      credential_ref: 'bmc/default',
      nvos_url: sw.nvueUrl,
      nvos_ssh: `${sw.ssh.host}:${sw.ssh.port}`,
      nvos_credential_ref: 'nvos/default',
      ...extra,
    };
  }

  /** The site of the BMC at `index` in `bmcs`. */
  siteOfBmc(index: number): string {
    return this.bmcSites.get(this.bmcs[index]!.id)!;
  }

  private async registerBmcs(): Promise<void> {
    const admin = this.client('admin');
    for (const site of this.siteIds)
      await unwrap(admin.POST('/v1/sites', { body: { id: site, name: `Test site ${site}` } }));
    if (this.opts.bulkRegister) return this.insertBmcs();
    for (const [i, bmc] of this.bmcs.entries()) {
      const body: NewDevice = {
        // The simulator's id: what the simulated site's burn-in scripts ask it for by tray name.
        name: bmc.id,
        site_id: this.siteOfBmc(i),
        node_type: 'compute_gb200_nvidia',
        bmc_url: bmc.url,
        credential_ref: 'bmc/default',
      };
      this.deviceIds.set(bmc.id, (await unwrap(admin.POST('/v1/devices', { body }))).id);
    }
  }

  /** The simulated BMCs as compute trays, straight into the devices table (bulkRegister). */
  private async insertBmcs(): Promise<void> {
    for (let i = 0; i < this.bmcs.length; i += 1000) {
      const chunk = this.bmcs.slice(i, i + 1000);
      const rows = await this.dbHandle.db
        .insert(devices)
        .values(
          chunk.map((bmc, j) => ({
            name: bmc.id,
            siteId: this.siteOfBmc(i + j),
            nodeType: 'compute_gb200_nvidia',
            bmcUrl: bmc.url,
            credentialRef: 'bmc/default',
          })),
        )
        .returning({ id: devices.id, name: devices.name });
      const ids = new Map(rows.map((r) => [r.name, r.id]));
      for (const bmc of chunk) this.deviceIds.set(bmc.id, ids.get(bmc.id)!);
    }
  }

  readonly deviceIds = new Map<string, string>();

  private readonly clients = new Map<Role, FleetClient>();

  /** The hub's typed API as `role`. */
  client(role: Role): FleetClient {
    let client = this.clients.get(role);
    if (!client)
      this.clients.set(role, (client = createFleetClient({ baseUrl: this.hubUrl, token: this.tokens[role] })));
    return client;
  }

  /**
   * Any hub request, the status and body unchecked, for tests that build paths themselves or probe bad input;
   * `client(role)` is the typed way.
   */
  async api(
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    path: string,
    body?: unknown,
    token?: string,
    headers: Record<string, string> = {},
  ): Promise<ApiResponse> {
    const client = createUncheckedClient({ baseUrl: this.hubUrl, token });
    const { data, error, response } = await client[method](path, { body, headers });
    return { status: response.status, headers: response.headers, body: data ?? error };
  }

  /**
   * Polls the job until it ends. `pollMs` is short for tests; benches that time a job by its finished_at poll
   * slower, so their own requests (a campaign's read counts its devices) do not load the stack they measure.
   */
  async waitForJob(id: string, timeoutMs = 60_000, pollMs = 100): Promise<Job> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const job = await unwrap(this.client('viewer').GET('/v1/jobs/{id}', { params: { path: { id } } }));
      if (['succeeded', 'failed', 'cancelled'].includes(job.state)) return job;
      if (Date.now() > deadline) throw new Error(`job ${id} still ${job.state} after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, pollMs));
    }
  }

  /** The admin API of the simulator serving a BMC. */
  simAdminUrlOf(bmcId: string): string {
    return this.bmcAdminUrls.get(bmcId) ?? this.simAdminUrl;
  }

  async simRequests(bmcId: string): Promise<{ method: string; path: string; status: number; body?: unknown }[]> {
    return ((await (await fetch(`${this.simAdminUrlOf(bmcId)}/bmcs/${bmcId}/requests`)).json()) as { items: [] }).items;
  }

  /** The metrics port a process picked (configs ask for port 0). */
  metricsPort(p: ManagedProcess): number {
    const m = p.output.match(/"metricsPort":(\d+)/);
    if (!m) throw new Error(`${p.name} logged no metricsPort`);
    return Number(m[1]);
  }

  async stop(): Promise<void> {
    await Promise.allSettled([
      ...this.satelliteProcesses.map((s) => s.stop()),
      this.agent?.stop(),
      ...this.hubs.map((h) => h?.stop()),
      ...this.simulators.map((s) => s.stop()),
      this.netboxAgent?.stop(),
    ]);
    await this.netbox?.stop(true);
    const leaks =
      this.temporal && this.database && this.opts.leakScan !== false ? await this.scanForLeaks() : undefined;
    if (leaks) recordLeakScan(leaks);
    // Encrypted histories would replay only with this stack's ring.
    await this.temporalTlsProxy?.stop();
    for (const link of this.satelliteLinks.values()) await link.stop();
    if (this.temporal && !this.payloadKeyConfig) await recordHistories(this.temporal.address);
    await this.temporal?.stop();
    await this.slurm?.stop();
    await this.dbHandle?.close();
    await this.database?.drop();
    if (leaks?.findings.length) throw new Error(`leak scan of ${this.dir}: ${leaks.findings.join('; ')}`);
    if (!process.env['FLEET_KEEP_TEST_RUNS']) rmSync(this.dir, { recursive: true, force: true });
  }

  /** `fn` with a client of this stack's Temporal that reads payloads as the workflow agent does (codec, failures). */
  async withTemporal<T>(fn: (client: Client) => Promise<T>): Promise<T> {
    const connection = await Connection.connect({ address: this.temporal.address });
    try {
      return await fn(new Client({ connection, dataConverter: fleetDataConverter(await this.readingCodec()) }));
    } finally {
      await connection.close();
    }
  }

  /**
   * Every password and token this stack handed out (the secret store as it is now, rotations included), searched in
   * its decoded Temporal histories, a dump of its database and its logs; with the codec on, device addresses must not
   * be readable in the histories as Temporal stores them.
   */
  async scanForLeaks(extra: Needle[] = []): Promise<LeakScanReport> {
    const secretsFile = join(this.dir, 'secrets.json');
    const stored = existsSync(secretsFile)
      ? Object.entries(JSON.parse(readFileSync(secretsFile, 'utf8')) as Record<string, { password: string }>)
      : [];
    const secrets = [
      ...stored
        .filter(([ref]) => ref !== 'temporal/payload-keys')
        .map(([ref, e]) => ({ name: ref, value: e.password })),
      ...Object.entries(this.tokens ?? {}).map(([role, value]) => ({ name: `${role} API token`, value })),
      ...[...this.satelliteTokens].map(([site, value]) => ({ name: `satellite token of ${site}`, value })),
      { name: 'BMC password', value: this.bmcPassword },
      { name: 'NVOS password', value: this.switchPassword },
      ...[this.keyRing?.document, ...this.siteKeyRings.values()]
        .flatMap((d) => Object.values((JSON.parse(d ?? '{"keys":{}}') as { keys: Record<string, string> }).keys))
        .map((value) => ({ name: 'payload key', value })),
      ...extra,
    ];
    const encryptedOnly = [
      ...this.bmcs.map((b) => ({ name: `address of ${b.id}`, value: new URL(b.url).host })),
      ...this.switches.flatMap((sw) => [
        { name: `NVUE address of ${sw.id}`, value: new URL(sw.nvueUrl).host },
        { name: `SSH address of ${sw.id}`, value: `${sw.ssh.host}:${sw.ssh.port}` },
      ]),
    ];
    const codec = await this.readingCodec();
    return scanForLeaks({
      temporalAddress: this.temporal.address,
      ...(codec ? { codec } : {}),
      databaseUrl: this.database.url,
      logFiles: logFilesUnder(this.dir),
      secrets,
      encryptedOnly,
    });
  }
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: unknown;
}

export function expectStatus(status: number) {
  return (res: ApiResponse): ApiResponse => {
    if (res.status !== status)
      throw new Error(`expected HTTP ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
    return res;
  };
}

/** How many processes an option asks for: a positive whole number, at most `most`; `most` when not given. */
function processCount(option: string, wanted: number | undefined, most: number): number {
  if (wanted !== undefined && !(Number.isSafeInteger(wanted) && wanted >= 1))
    throw new RangeError(`${option}: a positive whole number, not ${wanted}`);
  return Math.min(most, wanted ?? most);
}

/** `items` dealt to `groups` groups in turn, as cards: the first group gets items 0, groups, 2 * groups, ... */
function dealInTurn<T>(items: readonly T[], groups: number): T[][] {
  return Array.from({ length: groups }, (_, i) => items.filter((_, k) => k % groups === i));
}

/** A process's name: the first is plain `kind`; the others by their site when each serves one, else by number. */
function shardName(kind: string, i: number, sites: readonly string[], oneSiteEach: boolean): string {
  if (i === 0) return kind;
  return oneSiteEach ? `${kind}-${sites[0]}` : `${kind}-${i + 1}`;
}

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { cloneTestDatabase, type TestDatabase } from '@fleet/db/testing';
import { freePort, startTemporalDevServer, type DevServer } from '@fleet/temporal';
import { ManagedProcess, repoRoot } from '../tools/lib/processes.js';
import { testEnv } from './harness/env.js';

/**
 * Every Fleet process stops within its grace time after SIGTERM, with a shutdown line in its log, whatever
 * its dependencies do (a Postgres that stopped answering) and wherever its stdout goes (a closed pipe); and
 * stops by itself when the process that started it dies, even by SIGKILL.
 */

/** A TCP relay to Postgres that can stop relaying while keeping every connection open: a hung database. */
class FreezableProxy {
  private readonly sockets = new Set<Socket>();
  private server!: Server;
  port = 0;

  async start(target: { host: string; port: number }): Promise<this> {
    this.server = createServer((client) => {
      const upstream = connect(target.port, target.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  /** Nothing flows any more in either direction; no connection is closed, new ones are never answered. */
  freeze(): void {
    for (const s of this.sockets) {
      s.unpipe();
      s.pause();
    }
    this.server.removeAllListeners('connection');
    this.server.on('connection', (s: Socket) => (this.sockets.add(s), s.pause()));
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((r) => this.server.close(r));
  }
}

/** Sends SIGTERM and resolves with the exit code and the seconds it took; SIGKILL (code 'killed') past limitS. */
async function terminate(
  child: ChildProcess,
  limitS: number,
): Promise<{ code: number | string | null; seconds: number }> {
  const t0 = Date.now();
  const exited = new Promise<number | string | null>((r) => child.once('exit', (code, sig) => r(code ?? sig)));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), limitS * 1000);
  const code = await exited;
  clearTimeout(timer);
  return { code: Date.now() - t0 >= limitS * 1000 ? 'killed' : code, seconds: (Date.now() - t0) / 1000 };
}

describe('process shutdown', () => {
  const dir = join(repoRoot, '.run', 'tests', `processes-${Date.now()}`);
  const env = testEnv();
  let database: TestDatabase;
  let temporal: DevServer;
  const write = (name: string, config: unknown) => {
    const file = join(dir, `${name}.json`);
    writeFileSync(file, JSON.stringify(config));
    return file;
  };
  /** The test database behind a relay the test can freeze: a Postgres that stops answering. */
  const hangablePostgres = async (t: TestContext) => {
    const url = new URL(database.url);
    const proxy = await new FreezableProxy().start({ host: url.hostname, port: Number(url.port || 5432) });
    t.after(() => proxy.close());
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    return { url: url.toString(), hang: () => proxy.freeze() };
  };
  const hubConfig = async (databaseUrl: string, graceS: number) => ({
    metrics: { port: 0 },
    database: { url: databaseUrl, poolSize: 2 },
    http: { port: await freePort(), shutdownGraceS: graceS, allowPlainHttp: true },
    firmware: { blobDir: join(dir, 'blobs') },
  });
  const simulatorConfig = async () => ({
    timeScale: 0.01,
    admin: { port: 0 },
    generate: [
      {
        count: 1,
        idPrefix: 'bmc-',
        firstAddress: '127.61.0.1',
        port: await freePort(),
        username: 'admin',
        password: 'pw',
      },
    ],
    switches: [],
  });
  const stopsWithin = async (p: ManagedProcess, graceS: number, lines: RegExp[]) => {
    const { code, seconds } = await terminate(p.child!, graceS + 3);
    assert.notEqual(code, 'killed', `${p.name} still ran ${seconds}s after SIGTERM:\n${p.output.slice(-2000)}`);
    for (const line of lines) assert.match(p.output, line);
    return { code, seconds };
  };

  before(
    async () => {
      mkdirSync(dir, { recursive: true });
      database = await cloneTestDatabase(env.databaseUrl, env.templateDb);
      temporal = await startTemporalDevServer();
    },
    { timeout: 120_000 },
  );

  after(async () => {
    await temporal?.stop();
    await database?.drop();
    if (!process.env['FLEET_KEEP_TEST_RUNS']) rmSync(dir, { recursive: true, force: true });
  });

  it('hub: SIGTERM drains and exits 0 with a shutdown line', { timeout: 60_000 }, async () => {
    const hub = new ManagedProcess('hub', 'apps/hub/src/main.ts', write('hub', await hubConfig(database.url, 5)), dir);
    await hub.start('hub listening');
    const { code } = await stopsWithin(hub, 5, [/"msg":"hub stopping"/, /"msg":"hub stopped"/]);
    assert.equal(code, 0);
  });

  it('hub: exits within its grace time when Postgres stops answering mid-request', { timeout: 60_000 }, async (t) => {
    const postgres = await hangablePostgres(t);
    const config = await hubConfig(postgres.url, 3);
    const hub = new ManagedProcess('hub-pg-hung', 'apps/hub/src/main.ts', write('hub-pg-hung', config), dir);
    await hub.start('hub listening');
    postgres.hang();
    // A request whose token lookup waits on the hung database: it keeps the drain waiting.
    void fetch(`http://127.0.0.1:${config.http.port}/v1/devices`, { headers: { authorization: 'Bearer nope' } }).catch(
      () => undefined,
    );
    await new Promise((r) => setTimeout(r, 300));
    await stopsWithin(hub, 3, [/"msg":"hub stopping"/, /did not stop within 3s/]);
  });

  it('netbox agent: exits within its grace time when Postgres stops answering', { timeout: 60_000 }, async (t) => {
    const postgres = await hangablePostgres(t);
    const tokenFile = join(dir, 'netbox-token');
    writeFileSync(tokenFile, 'nbt_abc.def', { mode: 0o600 });
    const agent = new ManagedProcess(
      'netbox-agent',
      'apps/netbox-agent/src/main.ts',
      // NetBox is a closed port: every sync fails fast, and records its failure in the (hung) database.
      write('netbox-agent', {
        metrics: { port: 0 },
        database: { url: postgres.url, poolSize: 2 },
        netbox: { url: `http://127.0.0.1:${await freePort()}`, tokenFile },
        sync: { intervalS: 0.2 },
      }),
      dir,
    );
    await agent.start('netbox agent started');
    postgres.hang();
    await new Promise((r) => setTimeout(r, 500));
    const { code } = await stopsWithin(agent, 10, [/"msg":"netbox agent stopping"/]);
    // Its sync waits on the hung database: the hard exit (1) ends it, or it stopped cleanly (0) between two syncs.
    // A crash (an error line, another code, neither line) is neither.
    const end = /"msg":"netbox agent (stopped|did not stop within 10s; exiting)"/.exec(agent.output)?.[1];
    assert.ok(end, `no shutdown line:\n${agent.output.slice(-2000)}`);
    assert.equal(code, end === 'stopped' ? 0 : 1, `${end}, yet exit code ${code}:\n${agent.output.slice(-2000)}`);
  });

  it(
    `netbox agent: a spool directory it cannot use stops it at start, named; one a killed agent left behind is \
removed at start`,
    { timeout: 60_000 },
    async () => {
      const tokenFile = join(dir, 'netbox-token');
      writeFileSync(tokenFile, 'nbt_abc.def', { mode: 0o600 });
      const spoolDir = join(dir, 'netbox-spool');
      const netboxPort = await freePort();
      const config = (spool: string) => ({
        metrics: { port: 0 },
        database: { url: database.url, poolSize: 2 },
        netbox: { url: `http://127.0.0.1:${netboxPort}`, tokenFile },
        sync: { intervalS: 60, spoolDir: spool },
      });
      const missing = new ManagedProcess(
        'netbox-agent-no-spool',
        'apps/netbox-agent/src/main.ts',
        write('netbox-agent-no-spool', config(join(spoolDir, 'missing'))),
        dir,
      );
      await assert.rejects(missing.start('netbox agent started'), /exited \(1\) before ready/);
      const fatal = missing.output.split('\n').find((l) => l.includes('"level":60'));
      assert.match(fatal ?? missing.output, /sync\.spoolDir is not usable/);
      assert.match(
        fatal!,
        /"err":"NetBox pass spool [^"]*netbox-spool\/missing: clear: ENOENT: no such file or directory/,
      );

      // A pass directory of a process that no longer runs (an agent killed in a pass).
      const gone = spawn(process.execPath, ['-e', '0']);
      await new Promise((r) => gone.once('exit', r));
      const left = join(spoolDir, `fleet-netbox-pass-${gone.pid}-x1y2z3`);
      mkdirSync(left, { recursive: true });
      writeFileSync(join(left, 'device.json'), '[]');
      const agent = new ManagedProcess(
        'netbox-agent-spool',
        'apps/netbox-agent/src/main.ts',
        write('netbox-agent-spool', config(spoolDir)),
        dir,
      );
      await agent.start('netbox agent started');
      try {
        assert.match(agent.output, /removed the spools of NetBox passes a stopped agent left behind/);
        assert.equal(existsSync(left), false);
      } finally {
        await agent.stop();
      }
    },
  );

  it('workflow agent: stops with a shutdown line while Temporal is unreachable', { timeout: 60_000 }, async () => {
    const agent = new ManagedProcess(
      'workflow-agent',
      'apps/workflow-agent/src/main.ts',
      write('workflow-agent', {
        metrics: { port: 0 },
        database: { url: database.url, poolSize: 2 },
        temporal: { address: `127.0.0.1:${await freePort()}` },
      }),
      dir,
    );
    await agent.start('workflow agent started');
    const { code } = await stopsWithin(agent, 10, [
      /"msg":"workflow agent stopping"/,
      /"msg":"workflow agent stopped"/,
    ]);
    assert.equal(code, 0);
  });

  it('satellite: SIGTERM stops the worker within its grace time', { timeout: 120_000 }, async () => {
    const satellite = new ManagedProcess(
      'satellite',
      'apps/satellite/src/main.ts',
      write('satellite', {
        siteId: 'proc-01',
        metrics: { port: 0 },
        temporal: { address: temporal.address },
        secrets: { provider: 'file', path: join(dir, 'secrets.json') },
        dataDir: join(dir, 'satellite-data'),
        artifacts: { dir: join(dir, 'artifacts') },
        worker: { shutdownGraceTimeS: 2, ...(env.workflowBundle ? { workflowBundlePath: env.workflowBundle } : {}) },
      }),
      dir,
    );
    writeFileSync(join(dir, 'secrets.json'), '{}', { mode: 0o600 });
    await satellite.start('satellite worker started', 90_000);
    const { code } = await stopsWithin(satellite, 7, [
      /"msg":"satellite worker stopping"/,
      /"msg":"satellite worker stopped"/,
    ]);
    assert.equal(code, 0);
  });

  it(
    'satellite with two sites: one that fails to start drains the one running, and the process exits 1',
    {
      timeout: 120_000,
    },
    async () => {
      const siteConfig = (siteId: string, extra: Record<string, unknown> = {}) =>
        write(`satellite-${siteId}`, {
          siteId,
          metrics: { port: 0 },
          temporal: { address: temporal.address },
          secrets: { provider: 'file', path: join(dir, 'secrets.json') },
          dataDir: join(dir, `data-${siteId}`),
          artifacts: { dir: join(dir, `artifacts-${siteId}`) },
          worker: { shutdownGraceTimeS: 2, ...(env.workflowBundle ? { workflowBundlePath: env.workflowBundle } : {}) },
          ...extra,
        });
      writeFileSync(join(dir, 'secrets.json'), '{}', { mode: 0o600 });
      // The second site's hub CA is read only as its worker starts, after the first site's is polling.
      const missingCa = join(dir, 'no-such-ca.pem');
      const satellite = new ManagedProcess(
        'satellite-two-sites',
        'apps/satellite/src/main.ts',
        [
          siteConfig('proc-a'),
          siteConfig('proc-b', { hub: { url: 'https://127.0.0.1:1', tokenRef: 'hub/token', caFile: missingCa } }),
        ],
        dir,
      );
      await assert.rejects(satellite.start('satellite worker started', 90_000), /exited \(1\) before ready/);
      const lines = satellite.output.split('\n');
      const line = (site: string | undefined, msg: string) =>
        lines.find((l) => (!site || l.includes(`"siteId":"${site}"`)) && l.includes(`"msg":"${msg}"`));
      assert.ok(line('proc-a', 'site worker started'), 'site a started first');
      assert.ok(line(undefined, 'a site worker failed to start')?.includes(missingCa), 'the failure names the file');
      assert.ok(line('proc-a', 'site worker stopped'), 'site a drained before the exit');
      assert.ok(line(undefined, 'satellite worker stopped with an error'));
      assert.equal(line('proc-b', 'site worker started'), undefined);
    },
  );

  it('simulator: SIGTERM closes its servers and exits 0 with a shutdown line', { timeout: 60_000 }, async () => {
    const sim = new ManagedProcess(
      'simulator',
      'packages/simulators/src/main.ts',
      write('simulator', await simulatorConfig()),
      dir,
    );
    await sim.start('redfish simulator ready');
    const { code } = await stopsWithin(sim, 5, [
      /"msg":"redfish simulator stopping"/,
      /"msg":"redfish simulator stopped"/,
    ]);
    assert.equal(code, 0);
  });

  it('a process whose stdout is a closed pipe still stops on SIGTERM', { timeout: 60_000 }, async () => {
    const file = write('hub-closed-stdout', await hubConfig(database.url, 3));
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(repoRoot, 'apps/hub/src/main.ts'), '--config', file],
      { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => ((out += d.toString()), out.includes('hub listening') && resolve()));
      child.once('exit', (code) => reject(new Error(`hub exited (${code}) before ready: ${out}`)));
    });
    // The reader goes away, as when the process that started it died.
    child.stdout!.destroy();
    child.stderr!.destroy();
    const { code, seconds } = await terminate(child, 6);
    assert.notEqual(code, 'killed', `hub still ran ${seconds}s after SIGTERM with its stdout closed`);
  });

  it(
    'processes started by a parent stop when the parent dies by SIGKILL, and log why',
    { timeout: 60_000 },
    async () => {
      const simFile = write('simulator-orphan', await simulatorConfig());
      const script = join(dir, 'parent.ts');
      writeFileSync(
        script,
        `import { ManagedProcess } from ${JSON.stringify(join(repoRoot, 'tools/lib/processes.ts'))};
const sim = new ManagedProcess(
  'simulator-orphan',
  'packages/simulators/src/main.ts',
  ${JSON.stringify(simFile)},
  ${JSON.stringify(dir)},
);
await sim.start('redfish simulator ready');
console.log('child ' + sim.pid);
setInterval(() => undefined, 1000);
`,
      );
      const parent = spawn(process.execPath, ['--import', 'tsx', script], {
        cwd: repoRoot,
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const childPid = await new Promise<number>((resolve, reject) => {
        let out = '';
        parent.stdout!.on('data', (d: Buffer) => {
          out += d.toString();
          const m = out.match(/child (\d+)/);
          if (m) resolve(Number(m[1]));
        });
        parent.once('exit', (code) => reject(new Error(`parent exited (${code}): ${out}`)));
      });
      parent.kill('SIGKILL');
      // An orphan that exited may stay a zombie until init reaps it: that is not running.
      const alive = (pid: number) => {
        try {
          return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
        } catch {
          return false;
        }
      };
      const deadline = Date.now() + 8_000;
      while (alive(childPid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      const stillAlive = alive(childPid);
      if (stillAlive) process.kill(childPid, 'SIGKILL');
      assert.equal(stillAlive, false, 'the simulator outlived the parent that started it');
      const log = readFileSync(join(dir, 'simulator-orphan.log'), 'utf8');
      assert.match(log, /"reason":"parent \d+ exited"[^\n]*"msg":"redfish simulator stopping"/);
      assert.match(log, /"msg":"redfish simulator stopped"/);
    },
  );
});

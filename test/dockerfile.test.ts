import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { buildTargets, distEntry } from '../tools/lib/build-entries.js';
import { repoRoot } from '../tools/lib/processes.js';

// No Docker engine runs here: the Dockerfile is read as text and held to what each image must be. The entry files must
// exist, so tools/run-tests.ts runs `pnpm build` first for this file (it imports tools/lib/build-entries).

interface Stage {
  name: string;
  base: string;
  /** Instructions in order, continuation lines joined: [keyword, rest]. */
  steps: [string, string][];
}

function parseDockerfile(text: string): Stage[] {
  const lines = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const stages: Stage[] = [];
  for (const line of lines) {
    const [, keyword = '', rest = ''] = /^(\S+)\s+(.*)$/.exec(line) ?? [];
    if (keyword.toUpperCase() === 'FROM') {
      const m = /^(\S+)\s+AS\s+(\S+)$/i.exec(rest);
      assert.ok(m, `FROM without a stage name: ${line}`);
      stages.push({ base: m[1]!, name: m[2]!, steps: [] });
    } else {
      assert.ok(stages.length, `${keyword} before any FROM`);
      stages.at(-1)!.steps.push([keyword.toUpperCase(), rest]);
    }
  }
  return stages;
}

const stages = parseDockerfile(readFileSync(join(repoRoot, 'Dockerfile'), 'utf8'));
const stage = (name: string) => stages.find((s) => s.name === name);
/** A stage and the stages it is built on, nearest first. */
const lineage = (name: string): Stage[] => {
  const s = stage(name);
  return s ? [s, ...lineage(s.base)] : [];
};
const last = (name: string, keyword: string) =>
  lineage(name)
    .flatMap((s) => s.steps.filter(([k]) => k === keyword).reverse())
    .at(0)?.[1];

/** Each image target and the source entry its command runs compiled. */
const targets = {
  hub: 'apps/hub/src/main.ts',
  'workflow-agent': 'apps/workflow-agent/src/main.ts',
  'netbox-agent': 'apps/netbox-agent/src/main.ts',
  satellite: 'apps/satellite/src/main.ts',
  simulator: 'packages/simulators/src/main.ts',
};

describe('Dockerfile', () => {
  it('builds from the lockfile and runs pnpm build on node:20-bookworm-slim', () => {
    const build = stage('build');
    assert.ok(build, 'a build stage');
    assert.equal(build.base, 'node:20-bookworm-slim');
    const runs = build.steps.filter(([k]) => k === 'RUN').map(([, r]) => r);
    assert.ok(runs.some((r) => /pnpm install --frozen-lockfile/.test(r) && /pnpm build/.test(r)));
    assert.ok(
      runs.some((r) => /deploy --prod/.test(r)),
      'production dependencies only',
    );
  });

  for (const [name, source] of Object.entries(targets)) {
    it(`target ${name}: non-root, a health check, and a command running its built entry with plain node`, () => {
      assert.ok(stage(name), `no stage ${name}`);
      assert.equal(lineage(name).at(-1)!.base, 'node:20-bookworm-slim');
      const user = last(name, 'USER');
      assert.ok(user && !['root', '0'].includes(user.split(':')[0]!), `${name} runs as ${user ?? 'root'}`);

      const command = JSON.parse(last(name, 'CMD') ?? 'null') as string[] | null;
      assert.ok(Array.isArray(command), `${name}: CMD in exec form`);
      assert.equal(command[0], 'node');
      assert.ok(!command.some((arg) => arg.includes('tsx')), command.join(' '));
      const entry = command.find((arg) => arg.endsWith('.js'));
      assert.equal(entry, distEntry(source));
      assert.ok(existsSync(join(repoRoot, entry!)), `${entry} after pnpm build`);
      // The image holds the entry: its package's deployment is copied to the package's folder under WORKDIR.
      const packageDir = buildTargets.find((t) => t.entries.includes(source))!.packageDir;
      assert.ok(
        lineage(name).some((s) =>
          s.steps.some(([k, r]) => k === 'COPY' && new RegExp(`^--from=build /deploy/\\S+ ${packageDir}$`).test(r)),
        ),
        `${name} copies its package to ${packageDir}`,
      );
      assert.equal(last(name, 'WORKDIR'), '/opt/fleet');

      const health = last(name, 'HEALTHCHECK');
      const probe = /CMD\s+(\[.*\])$/.exec(health ?? '');
      assert.ok(probe, `${name}: HEALTHCHECK ... CMD [...]`);
      assert.deepEqual(JSON.parse(probe[1]!), ['node', 'deploy/docker/healthcheck.mjs', name]);
    });
  }

  it('.dockerignore keeps installed and built files out of the build context', () => {
    const ignored = readFileSync(join(repoRoot, '.dockerignore'), 'utf8').split('\n');
    for (const pattern of ['**/node_modules', '**/dist', '.tools', '.run', '.git'])
      assert.ok(ignored.includes(pattern));
  });
});

describe('deploy/docker/healthcheck.mjs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-healthcheck-'));
  const servers: Server[] = [];
  after(() => {
    for (const s of servers) s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A server answering `status` to every request; returns its port and the paths it was asked for. */
  const serve = async (status: number) => {
    const paths: string[] = [];
    const server = createServer((req, res) => {
      paths.push(req.url ?? '');
      res.writeHead(status).end();
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return { port: (server.address() as { port: number }).port, paths };
  };
  const check = async (kind: string, config: unknown) => {
    const file = join(dir, `${kind}-${Date.now()}.json`);
    writeFileSync(file, JSON.stringify(config));
    const script = join(repoRoot, 'deploy/docker/healthcheck.mjs');
    return promisify(execFile)(process.execPath, [script, kind, file]).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code: number; stderr: string }) => ({ code: err.code, stderr: err.stderr }),
    );
  };

  it('asks the hub for /healthz on its API port and the others for their metrics or admin endpoint', async () => {
    const up = await serve(200);
    assert.equal((await check('hub', { http: { host: '0.0.0.0', port: up.port } })).code, 0);
    assert.equal((await check('satellite', { metrics: { port: up.port } })).code, 0);
    assert.equal((await check('simulator', { admin: { port: up.port } })).code, 0);
    assert.deepEqual(up.paths, ['/healthz', '/metrics', '/bmcs']);
  });

  it('fails on an error answer, a closed port, or a config without the endpoint', async () => {
    const down = await serve(503);
    const failing = await check('workflow-agent', { metrics: { port: down.port } });
    assert.deepEqual(failing, { code: 1, stderr: `unhealthy: http://127.0.0.1:${down.port}/metrics answered 503\n` });
    const closed = await serve(200);
    await new Promise((r) => servers.pop()!.close(r));
    assert.match((await check('netbox-agent', { metrics: { port: closed.port } })).stderr, /ECONNREFUSED/);
    assert.match((await check('hub', { metrics: { port: closed.port } })).stderr, /has no http\.port/);
  });
});

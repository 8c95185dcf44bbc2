import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { describe, it } from 'node:test';
import { parseConfig } from '@fleet/config';
import { searchAttributes, siteTaskQueue } from '@fleet/domain';
import { HubConfig } from '@fleet/hub';
import { SatelliteConfig } from '@fleet/satellite';
import {
  type ComposeFile,
  type ComposeService,
  composeSpecValidator,
  durationSeconds,
  readComposeFile,
} from '../tools/lib/compose-spec.js';
import { repoRoot } from '../tools/lib/processes.js';
import { distEntry } from '../tools/lib/build-entries.js';
import { configuredPaths, deployedProcesses } from './lib/deployed-processes.js';

const productionPath = join(repoRoot, 'deploy/compose/production.yml');
const production = readComposeFile(productionPath);
const validate = composeSpecValidator();

/** Config keys naming folders the process writes. */
const writtenKey = /^(dir|dataDir|blobDir|path)$/;

const asList = (v: string[] | string | undefined) => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
const refs = (list: ComposeService['configs']) =>
  (list ?? []).map((r) => (typeof r === 'string' ? { source: r, target: undefined } : r));
const dependsOn = (s: ComposeService) =>
  Array.isArray(s.depends_on)
    ? Object.fromEntries(s.depends_on.map((d) => [d, { condition: 'service_started' }]))
    : (s.depends_on ?? {});

/** Where a compose config or secret lands in the container: configs at their target, secrets under /run/secrets. */
function mounts(s: ComposeService): { path: string; writable: boolean; kind: string }[] {
  const configs = refs(s.configs).map((r) => ({ path: r.target ?? `/${r.source}`, writable: false, kind: 'config' }));
  const secrets = refs(s.secrets).map((r) => ({
    // A target is a file name under /run/secrets, or an absolute path.
    path: posix.isAbsolute(r.target ?? '') ? r.target! : posix.join('/run/secrets', r.target ?? r.source),
    writable: false,
    kind: 'secret',
  }));
  const volumes = (s.volumes ?? []).map((v) => {
    if (typeof v !== 'string') return { path: v.target, writable: !v.read_only, kind: 'volume' };
    const [, target, mode] = v.split(':');
    return { path: target!, writable: mode !== 'ro', kind: 'volume' };
  });
  const tmpfs = asList(s.tmpfs).map((t) => ({ path: t.split(':')[0]!, writable: true, kind: 'tmpfs' }));
  return [...configs, ...secrets, ...volumes, ...tmpfs];
}

/** The Fleet processes of the file: each service whose command runs one of `processes`, with its parsed config. */
function fleetProcesses(compose: ComposeFile, composeDir: string) {
  return Object.entries(compose.services).flatMap(([name, service]) => {
    const command = asList(service.command);
    const script = Object.keys(deployedProcesses).find((s) => command.includes(s));
    if (!script) return [];
    const configPath = command[command.indexOf('--config') + 1];
    assert.ok(configPath, `${name} starts without --config`);
    const ref = refs(service.configs).find((r) => r.target === configPath);
    assert.ok(ref, `${name}: no compose config is mounted at ${configPath}`);
    const file = compose.configs?.[ref.source]?.file;
    assert.ok(file, `${name}: config ${ref.source} is not defined by a file`);
    const source = posix.join('deploy/compose', file);
    const raw = JSON.parse(readFileSync(join(composeDir, file), 'utf8')) as unknown;
    return [{ name, service, script, spec: deployedProcesses[script]!, raw, source }];
  });
}

/** The stage names a Dockerfile's `FROM ... AS <name>` lines define. */
function dockerfileTargets(text: string): string[] {
  return [...text.matchAll(/^\s*FROM\s+\S+(?:\s+--\S+)*\s+AS\s+([\w.-]+)\s*$/gim)].map((m) => m[1]!.toLowerCase());
}

describe('compose files against the Compose specification', () => {
  for (const file of ['deploy/compose/production.yml', 'docker-compose.yml'])
    it(`${file} validates`, () => {
      assert.deepEqual(validate(readComposeFile(join(repoRoot, file))), []);
    });

  it('refuses a misspelled key (the validator is strict)', () => {
    const doc = structuredClone(production);
    const hub = doc.services['hub']!;
    doc.services['hub'] = { ...hub, helthcheck: hub.healthcheck };
    assert.deepEqual(validate(doc), ['/services/hub: must NOT have additional properties (helthcheck)']);
  });
});

describe('deploy/compose/production.yml', () => {
  const composeDir = dirname(productionPath);
  const fleet = fleetProcesses(production, composeDir);

  it('runs every Fleet process with a config its schema accepts, every file it names mounted', () => {
    assert.deepEqual([...new Set(fleet.map((p) => p.script))].sort(), Object.keys(deployedProcesses).sort());
    for (const p of fleet) {
      assert.doesNotThrow(() => p.spec.parse(p.raw, p.source));
      if (p.script === distEntry('packages/db/src/migrate-cli.ts')) continue; // reads only `database`
      for (const [key, path] of configuredPaths(p.raw)) {
        // A folder the process reads files from (keyRingDir) holds mounts of its own.
        const on = mounts(p.service).find(
          (m) =>
            path === m.path || path.startsWith(`${m.path}/`) || (key.endsWith('Dir') && m.path.startsWith(`${path}/`)),
        );
        assert.ok(on, `${p.source}: ${key} ${path} is mounted into no file or folder of service ${p.name}`);
        if (writtenKey.test(key))
          assert.ok(on.writable && on.kind === 'volume', `${p.source}: ${key} ${path} is not on a writable volume`);
      }
    }
  });

  it('defines every config, secret and named volume a service uses, each config and secret by a file', () => {
    for (const [name, s] of Object.entries(production.services)) {
      for (const r of refs(s.configs)) assert.ok(production.configs?.[r.source]?.file, `${name}: config ${r.source}`);
      for (const r of refs(s.secrets)) assert.ok(production.secrets?.[r.source]?.file, `${name}: secret ${r.source}`);
      for (const v of s.volumes ?? []) {
        const source = typeof v === 'string' ? v.split(':')[0]! : (v.source ?? '');
        if (!source.startsWith('.') && !source.startsWith('/'))
          assert.ok(production.volumes && source in production.volumes, `${name}: volume ${source}`);
      }
    }
    for (const [name, c] of Object.entries(production.configs ?? {}))
      if (!c.file?.startsWith('./production/secrets/'))
        assert.ok(existsSync(join(composeDir, c.file ?? '')), `config ${name}: ${c.file} is not in the repository`);
  });

  it('mounts shell scripts that parse (sh -n)', () => {
    const scripts = Object.values(production.configs ?? {}).filter((c) => c.file?.endsWith('.sh'));
    assert.ok(scripts.length > 0);
    for (const c of scripts) {
      const run = spawnSync('sh', ['-n', join(composeDir, c.file!)], { encoding: 'utf8' });
      assert.equal(run.status, 0, `${c.file}: ${run.stderr}`);
    }
  });

  it('passes no password, key or token inline: the environment names files (NAME_FILE, paths)', () => {
    const secretName = /(PASSWORD|PWD|SECRET|TOKEN|KEY)$/;
    for (const [name, s] of Object.entries(production.services)) {
      const env = Array.isArray(s.environment)
        ? s.environment.map((e) => e.split('=', 2) as [string, string?])
        : Object.entries(s.environment ?? {}).map(([k, v]) => [k, String(v)] as const);
      for (const [key, value] of env)
        if (key.endsWith('_FILE')) {
          const secretPaths = mounts(s)
            .filter((m) => m.kind === 'secret')
            .map((m) => m.path);
          assert.ok(secretPaths.includes(value ?? ''), `${name}: ${key} names no secret the service mounts`);
        } else if (secretName.test(key) && value !== 'true' && value !== 'false')
          assert.ok(value?.startsWith('/'), `${name}: ${key} is set inline, not by file`);
    }
  });

  it('orders start-up: healthy dependencies have a health check, completed ones are one-shots', () => {
    for (const [name, s] of Object.entries(production.services))
      for (const [dep, { condition }] of Object.entries(dependsOn(s))) {
        const target = production.services[dep];
        assert.ok(target, `${name} depends on ${dep}, which is no service`);
        if (condition === 'service_healthy') assert.ok(target.healthcheck?.test, `${dep} has no health check`);
        if (condition === 'service_completed_successfully') {
          assert.equal(target.restart, 'no', `${dep} restarts`);
          // An image's own entrypoint may never exit (admin-tools': tini -- sleep infinity).
          assert.ok(target.entrypoint, `${dep} keeps its image's entrypoint`);
        }
      }
    const fleetNeeds = (service: string, dep: string, condition: string) =>
      assert.equal(dependsOn(production.services[service]!)[dep]?.condition, condition, `${service} → ${dep}`);
    fleetNeeds('temporal', 'temporal-schema', 'service_completed_successfully');
    fleetNeeds('temporal-register', 'temporal', 'service_healthy');
    fleetNeeds('hub', 'migrate', 'service_completed_successfully');
    fleetNeeds('workflow-agent', 'temporal-register', 'service_completed_successfully');
    for (const p of fleet.filter((x) => x.script === distEntry('apps/satellite/src/main.ts')))
      fleetNeeds(p.name, 'temporal-register', 'service_completed_successfully');
  });

  it("gives the hub and the workflow agent every site's payload key ring, and no satellite another site's", () => {
    const sites = fleet
      .filter((x) => x.script === distEntry('apps/satellite/src/main.ts'))
      .map((p) => (p.raw as { siteId: string }).siteId);
    const keyRingDir = (raw: unknown): string | undefined => {
      const c = raw as { temporal?: { payloadEncryption?: { keyRingDir?: string } } };
      const h = raw as { temporalPayloadEncryption?: { keyRingDir?: string } };
      return c.temporal?.payloadEncryption?.keyRingDir ?? h.temporalPayloadEncryption?.keyRingDir;
    };
    for (const script of ['apps/hub/src/main.ts', 'apps/workflow-agent/src/main.ts']) {
      const p = fleet.find((x) => x.script === distEntry(script))!;
      const dir = keyRingDir(p.raw);
      assert.ok(dir, `${p.source}: one key ring for every site; give keyRingDir, a ring per site`);
      for (const site of sites)
        assert.ok(
          mounts(p.service).some((m) => m.path === posix.join(dir, `${site}.json`)),
          `${p.name}: no key ring of site ${site} in ${dir}`,
        );
    }
    const ringSecrets = (p: (typeof fleet)[number]) =>
      refs(p.service.secrets)
        .map((r) => r.source)
        .filter((n) => n.endsWith('-payload-keyring.json'));
    for (const p of fleet.filter((x) => x.script === distEntry('apps/satellite/src/main.ts')))
      assert.deepEqual(ringSecrets(p), [], `${p.name} mounts a ring file: its own is in its secret store`);
  });

  it('probes each long-running process on the port its config serves (the hub its API, the others metrics)', () => {
    for (const p of fleet.filter((x) => x.service.restart !== 'no')) {
      const probe = asList(p.service.healthcheck?.test).join(' ');
      const config = p.raw as { http?: { port: number }; metrics: { port: number } };
      const port = p.script === distEntry('apps/hub/src/main.ts') ? config.http?.port : config.metrics.port;
      assert.match(probe, new RegExp(`127\\.0\\.0\\.1'?(:|, port: )${port}\\b`), `${p.name} probes another port`);
    }
  });

  it('gives each process more time to stop than it takes', () => {
    for (const p of fleet.filter((x) => x.service.restart !== 'no')) {
      const graceS = p.spec.graceS(p.raw, p.source);
      const stopS = durationSeconds(p.service.stop_grace_period ?? '10s');
      assert.ok(stopS > graceS, `${p.name}: stop_grace_period ${stopS} s <= its shutdown ${graceS} s`);
    }
  });

  it('runs two hub replicas behind the proxy, which the satellites call', () => {
    const hub = production.services['hub']!;
    assert.equal(hub.deploy?.replicas, 2);
    const hubConfig = parseConfig(HubConfig, fleet.find((p) => p.name === 'hub')!.raw);
    const proxy = production.services['proxy']!;
    assert.equal(dependsOn(proxy)['hub']?.condition, 'service_healthy');
    const nginxFile = production.configs?.[refs(proxy.configs)[0]!.source]?.file ?? '';
    const nginx = readFileSync(join(composeDir, nginxFile), 'utf8');
    const upstream = /upstream\s+(\w+)\s*\{([^}]*)\}/.exec(nginx);
    assert.ok(upstream, `${nginxFile} defines no upstream`);
    assert.match(upstream[2]!, new RegExp(`server\\s+hub:${hubConfig.http.port}[\\s;]`), 'upstream is not the hub');
    assert.match(nginx, new RegExp(`proxy_pass\\s+${upstream[1]};`), 'nothing is passed to the hub upstream');
    const aliases = Object.values(proxy.networks ?? {}).flatMap((n) => (n && 'aliases' in n ? (n.aliases ?? []) : []));
    for (const p of fleet.filter((x) => x.script === distEntry('apps/satellite/src/main.ts'))) {
      const { hub: hubAccess } = parseConfig(SatelliteConfig, p.raw);
      assert.ok(hubAccess && aliases.includes(new URL(hubAccess.url).hostname), `${p.name} does not call the proxy`);
    }
  });

  it('registers exactly the search attributes the workflows set, on the namespace every process uses', () => {
    const register = production.services['temporal-register']!;
    const registered = asList(register.command).filter((a) => /^\w+=\w+$/.test(a));
    const expected = Object.values(searchAttributes).map((a) => `${a.name}=${a.type}`);
    assert.deepEqual(registered.sort(), expected.sort());
    const script = refs(register.configs).find((r) => asList(register.entrypoint).includes(r.target ?? ''));
    assert.ok(script, 'temporal-register runs no mounted script');
    const text = readFileSync(join(composeDir, production.configs?.[script.source]?.file ?? ''), 'utf8');
    const namespace = /^ns=(\S+)$/m.exec(text)?.[1];
    assert.ok(namespace, 'the registration script names no namespace');
    for (const p of fleet) {
      const raw = p.raw as { temporal?: { namespace?: string }; temporalNamespace?: string };
      const used = raw.temporal?.namespace ?? raw.temporalNamespace;
      if (used !== undefined) assert.equal(used, namespace, `${p.source} uses another namespace`);
    }
  });

  it('runs a satellite for dc-a and dc-b, each with its own config, secrets and volumes', () => {
    const satellites = fleet
      .filter((p) => p.script === distEntry('apps/satellite/src/main.ts'))
      .map((p) => {
        const config = parseConfig(SatelliteConfig, p.raw, p.source);
        const secretSources = refs(p.service.secrets).map((r) => r.source);
        const volumeSources = (p.service.volumes ?? []).map((v) => (typeof v === 'string' ? v.split(':')[0]! : ''));
        return { ...p, config, secretSources, volumeSources };
      });
    assert.deepEqual(satellites.map((s) => s.config.siteId).sort(), ['dc-a', 'dc-b']);
    assert.deepEqual(satellites.map((s) => siteTaskQueue(s.config.siteId)).sort(), ['site-dc-a', 'site-dc-b']);
    for (const s of satellites) {
      assert.equal(s.config.secrets.provider, 'file', `${s.name}: rotations need a writable file store`);
      assert.ok(s.config.temporal.tls, `${s.name} has no Temporal client certificate`);
      assert.ok(s.secretSources.length >= 2, `${s.name} mounts no certificate and key of its own`);
    }
    const [a, b] = satellites;
    assert.ok(a && b);
    assert.deepEqual(
      a.secretSources.filter((x) => b.secretSources.includes(x)),
      [],
      'the sites share a secret',
    );
    assert.deepEqual(
      a.volumeSources.filter((x) => b.volumeSources.includes(x)),
      [],
      'the sites share a volume',
    );
    assert.notEqual(a.source, b.source, 'the sites share a config file');
  });

  it("builds each Fleet image from a target of the repository's Dockerfile", (t) => {
    const builds = Object.entries(production.services).flatMap(([name, s]) =>
      typeof s.build === 'object' ? [{ name, image: s.image, ...s.build }] : [],
    );
    for (const b of builds) {
      assert.equal(posix.join('deploy/compose', b.context ?? '.'), '.', `${b.name}: context is not the repository`);
      assert.ok(b.image?.startsWith(`fleet/${b.target}:`), `${b.name}: image ${b.image} is not fleet/${b.target}`);
    }
    const dockerfile = join(repoRoot, 'Dockerfile');
    if (!existsSync(dockerfile)) {
      t.skip('no Dockerfile in the repository yet: build targets not checked against it');
      return;
    }
    const targets = dockerfileTargets(readFileSync(dockerfile, 'utf8'));
    for (const b of builds) assert.ok(targets.includes(b.target ?? ''), `${b.name}: Dockerfile has no ${b.target}`);
  });
});

import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { basename, dirname, join, posix } from 'node:path';
import { describe, it } from 'node:test';
import { parseConfig } from '@fleet/config';
import { SatelliteConfig } from '@fleet/satellite';
import { siteTaskQueue } from '@fleet/domain';
import { type K8sObject, parseManifests, renderKustomization, validateManifests } from '../tools/lib/kustomize.js';
import { repoRoot } from '../tools/lib/processes.js';
import { distEntry } from '../tools/lib/build-entries.js';
import { configuredPaths, deployedProcesses } from './lib/deployed-processes.js';

interface Mount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
  subPath?: string;
}
interface Container {
  name: string;
  image: string;
  command: string[];
  env?: { name: string; valueFrom?: { secretKeyRef?: { name: string } } }[];
  ports?: { name: string; containerPort: number }[];
  volumeMounts?: Mount[];
  lifecycle?: { preStop?: { sleep?: { seconds: number } } };
  securityContext?: { readOnlyRootFilesystem?: boolean; allowPrivilegeEscalation?: boolean };
  resources?: object;
  livenessProbe?: object;
}
interface Volume {
  name: string;
  configMap?: { name: string };
  secret?: { secretName: string };
  persistentVolumeClaim?: { claimName: string };
  emptyDir?: object;
}
interface PodSpec {
  terminationGracePeriodSeconds?: number;
  securityContext?: { runAsNonRoot?: boolean };
  containers: Container[];
  initContainers?: Container[];
  volumes?: Volume[];
}
interface Deployment extends K8sObject {
  spec: {
    replicas: number;
    strategy?: { type: string };
    template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
  };
}

/** Config keys naming folders the process writes. */
const writtenKey = /^(dir|dataDir|blobDir)$/;

const k8sDir = join(repoRoot, 'deploy/k8s');
const kustomizations = ['base', 'overlays'].flatMap((d) =>
  readdirSync(join(k8sDir, d)).map((name) => posix.join('deploy/k8s', d, name)),
);

function render(dir: string) {
  const yaml = renderKustomization(join(repoRoot, dir));
  return { yaml, objects: parseManifests(yaml) };
}

function find<T extends K8sObject>(objects: K8sObject[], kind: string, name: string, namespace?: string): T {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name && o.metadata.namespace === namespace);
  assert.ok(found, `${kind} ${name} in namespace ${namespace ?? '(none)'} is not in the rendered manifests`);
  return found as T;
}

const deploymentsOf = (objects: K8sObject[]) => objects.filter((o): o is Deployment => o.kind === 'Deployment');

/** The config file a container is started with, read from the ConfigMap mounted where its --config points. */
function mountedConfig(objects: K8sObject[], d: Deployment, c: Container) {
  const configPath = c.command[c.command.indexOf('--config') + 1];
  assert.ok(configPath, `${d.metadata.name}/${c.name} starts without --config`);
  const mount = c.volumeMounts?.find((m) => m.mountPath === dirname(configPath));
  assert.ok(mount, `${d.metadata.name}/${c.name}: nothing is mounted at ${dirname(configPath)}`);
  const volume = d.spec.template.spec.volumes?.find((v) => v.name === mount.name);
  assert.ok(volume?.configMap, `${d.metadata.name}/${c.name}: ${mount.mountPath} is not a ConfigMap`);
  const configMap = find<K8sObject & { data: Record<string, string> }>(
    objects,
    'ConfigMap',
    volume.configMap.name,
    d.metadata.namespace,
  );
  const text = configMap.data[basename(configPath)];
  assert.ok(text, `ConfigMap ${configMap.metadata.name} has no ${basename(configPath)}`);
  const raw = JSON.parse(text) as unknown;
  return { raw, source: `${d.metadata.namespace ?? ''}/${configMap.metadata.name}/${basename(configPath)}` };
}

const mountHolding = (c: Container, path: string) =>
  c.volumeMounts?.find((m) => path === m.mountPath || path.startsWith(`${m.mountPath}/`));

const processOf = (c: Container) => {
  const script = Object.keys(deployedProcesses).find((s) => c.command.includes(s));
  assert.ok(script, `container ${c.name} runs none of ${Object.keys(deployedProcesses).join(', ')}`);
  return deployedProcesses[script]!;
};

/** Secret names a pod references, by volume or environment. */
function secretsOf(spec: PodSpec): string[] {
  const fromVolumes = (spec.volumes ?? []).flatMap((v) => (v.secret ? [v.secret.secretName] : []));
  const fromEnv = [...spec.containers, ...(spec.initContainers ?? [])].flatMap((c) =>
    (c.env ?? []).flatMap((e) => (e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef.name] : [])),
  );
  return [...new Set([...fromVolumes, ...fromEnv])];
}

describe('deploy/k8s manifests', () => {
  for (const dir of kustomizations) {
    describe(dir, () => {
      const { yaml, objects } = render(dir);

      it(`validates strictly against the Kubernetes API schemas`, () => {
        assert.deepEqual(validateManifests(yaml), []);
      });

      it('mounts into each container a config its process accepts, with every file it names mounted', () => {
        for (const d of deploymentsOf(objects))
          for (const c of [...d.spec.template.spec.containers, ...(d.spec.template.spec.initContainers ?? [])]) {
            if (c.name === 'seed-secret-store') continue; // no process of ours: a copy, checked below
            const { raw, source } = mountedConfig(objects, d, c);
            assert.doesNotThrow(() => processOf(c).parse(raw, source));
            if (c.command.includes(distEntry('packages/db/src/migrate-cli.ts'))) continue; // reads only `database`
            for (const [key, path] of configuredPaths(raw)) {
              const mount = mountHolding(c, path);
              assert.ok(mount, `${source}: ${key} ${path} is on no volume of ${d.metadata.name}/${c.name}`);
              if (writtenKey.test(key)) assert.ok(!mount.readOnly, `${source}: ${key} ${path} is mounted read-only`);
            }
          }
      });

      it("keeps each satellite's secret store writable, seeded once from its Secret", () => {
        for (const d of deploymentsOf(objects).filter((x) => x.metadata.name === 'fleet-satellite')) {
          const spec = d.spec.template.spec;
          const satellite = spec.containers.find((c) => c.name === 'satellite')!;
          const { raw } = mountedConfig(objects, d, satellite);
          const store = (raw as { secrets: { provider: string; path: string } }).secrets;
          assert.equal(store.provider, 'file');
          const mount = mountHolding(satellite, store.path);
          assert.ok(mount && !mount.readOnly, `${store.path} is not on a writable volume (rotations write it)`);
          const seed = spec.initContainers?.find((c) => c.name === 'seed-secret-store');
          assert.ok(seed, `${d.metadata.namespace}: no init container seeds the store`);
          const seedTarget = mountHolding(seed, store.path);
          assert.deepEqual(
            [seedTarget?.name, seedTarget?.subPath],
            [mount.name, mount.subPath],
            'the seed lands where the satellite reads the store',
          );
          const script = seed.command.join(' ');
          assert.ok(script.includes(store.path) && script.includes('existsSync'), 'an existing store is kept');
          const from = seed.volumeMounts?.find((m) => script.includes(m.mountPath) && m.mountPath !== mount.mountPath);
          const volume = spec.volumes?.find((v) => v.name === from?.name);
          assert.ok(volume?.secret, 'the seed comes from a Secret');
        }
      });

      it('gives each pod more time to stop than its process takes (preStop sleep included)', () => {
        for (const d of deploymentsOf(objects)) {
          const spec = d.spec.template.spec;
          for (const c of spec.containers) {
            const { raw, source } = mountedConfig(objects, d, c);
            const graceS = processOf(c).graceS(raw, source);
            const preStopS = c.lifecycle?.preStop?.sleep?.seconds ?? 0;
            const podGraceS = spec.terminationGracePeriodSeconds ?? 30;
            assert.ok(
              podGraceS > preStopS + graceS,
              `${d.metadata.name}: pod grace ${podGraceS} s <= preStop ${preStopS} s + shutdown ${graceS} s`,
            );
          }
        }
      });

      it('runs each container as non-root on a read-only root filesystem, with resources and a probe', () => {
        for (const d of deploymentsOf(objects)) {
          const spec = d.spec.template.spec;
          assert.equal(spec.securityContext?.runAsNonRoot, true, d.metadata.name);
          for (const c of spec.containers) {
            assert.equal(c.securityContext?.readOnlyRootFilesystem, true, `${d.metadata.name}/${c.name}`);
            assert.equal(c.securityContext?.allowPrivilegeEscalation, false, `${d.metadata.name}/${c.name}`);
            assert.ok(c.resources, `${d.metadata.name}/${c.name} has no resources`);
            assert.ok(c.livenessProbe, `${d.metadata.name}/${c.name} has no liveness probe`);
          }
        }
      });

      it('keeps the agents and each satellite singletons (one replica, Recreate)', () => {
        for (const d of deploymentsOf(objects).filter((x) => x.metadata.name !== 'fleet-hub')) {
          assert.equal(d.spec.replicas, 1, d.metadata.name);
          assert.equal(d.spec.strategy?.type, 'Recreate', d.metadata.name);
        }
      });

      it("selects the hub's pods by its Service and PodDisruptionBudget", () => {
        const hub = deploymentsOf(objects).find((d) => d.metadata.name === 'fleet-hub');
        if (!hub) return; // a kustomization without the hub
        const labels = hub.spec.template.metadata.labels;
        const ns = hub.metadata.namespace;
        const service = find<
          K8sObject & { spec: { selector: Record<string, string>; ports: { targetPort: string }[] } }
        >(objects, 'Service', 'fleet-hub', ns);
        const pdb = find<K8sObject & { spec: { selector: { matchLabels: Record<string, string> } } }>(
          objects,
          'PodDisruptionBudget',
          'fleet-hub',
          ns,
        );
        for (const selector of [service.spec.selector, pdb.spec.selector.matchLabels])
          for (const [k, v] of Object.entries(selector)) assert.equal(labels[k], v, `selector ${k}=${v}`);
        const portNames = hub.spec.template.spec.containers.flatMap((c) => (c.ports ?? []).map((p) => p.name));
        for (const p of service.spec.ports)
          assert.ok(portNames.includes(p.targetPort), `no container port ${p.targetPort}`);
      });
    });
  }

  describe('deploy/k8s/overlays/two-sites', () => {
    const { objects } = render('deploy/k8s/overlays/two-sites');
    const satellites = deploymentsOf(objects)
      .filter((d) => d.metadata.name === 'fleet-satellite')
      .map((d) => {
        const container = d.spec.template.spec.containers[0]!;
        const config = parseConfig(SatelliteConfig, mountedConfig(objects, d, container).raw);
        return {
          namespace: d.metadata.namespace ?? '',
          siteId: config.siteId,
          taskQueue: siteTaskQueue(config.siteId),
          siteLabel: d.spec.template.metadata.labels['fleet.example.com/site'],
          secrets: secretsOf(d.spec.template.spec),
        };
      });

    it('runs a satellite for dc-a and dc-b, each in a namespace of its own with its own secrets', () => {
      assert.deepEqual(satellites.map((s) => s.siteId).sort(), ['dc-a', 'dc-b']);
      assert.deepEqual(satellites.map((s) => s.taskQueue).sort(), ['site-dc-a', 'site-dc-b']);
      for (const s of satellites) {
        assert.equal(s.namespace, `fleet-site-${s.siteId}`);
        assert.equal(s.siteLabel, s.siteId);
        find(objects, 'Namespace', s.namespace);
        assert.ok(s.secrets.length >= 2, `${s.siteId} references its secret store and Temporal client certificate`);
      }
      const [a, b] = satellites;
      assert.ok(a && b);
      assert.deepEqual(
        a.secrets.filter((name) => b.secrets.includes(name)),
        [],
        'the two sites share a secret name',
      );
    });

    it('places the shared processes outside every site namespace', () => {
      const shared = deploymentsOf(objects).filter((d) => d.metadata.name !== 'fleet-satellite');
      assert.deepEqual(shared.map((d) => d.metadata.name).sort(), [
        'fleet-hub',
        'fleet-netbox-agent',
        'fleet-workflow-agent',
      ]);
      for (const d of shared) assert.equal(d.metadata.namespace, 'fleet');
    });

    it('pins every image to a tag', () => {
      for (const d of deploymentsOf(objects))
        for (const c of [...d.spec.template.spec.containers, ...(d.spec.template.spec.initContainers ?? [])])
          assert.match(c.image, /^fleet\/[a-z-]+:[\w.-]+$/, `${d.metadata.name}/${c.name}`);
    });
  });
});

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { repoRoot } from './processes.js';

/** The Kubernetes version deploy/k8s is validated against: the oldest with a `sleep` preStop hook on by default. */
export const kubernetesVersion = '1.30.0';

const kubectlMissing =
  'kubectl is not installed: deploy/k8s is rendered with `kubectl kustomize` (a client with Kustomize v5, ' +
  "Kubernetes 1.27 or later; Debian's kubernetes-client 1.20 is too old). Install kubectl from Kubernetes' own " +
  'package repository (pkgs.k8s.io) or the Google Cloud SDK, then run this again.';

/** A rendered Kubernetes object: only what callers read is typed. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

/** `kubectl kustomize <dir>` as YAML; throws naming what to install when kubectl is missing. */
export function renderKustomization(dir: string): string {
  const run = spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8' });
  if (run.error) {
    if ((run.error as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(kubectlMissing);
    throw run.error;
  }
  if (run.status !== 0) throw new Error(`kubectl kustomize ${dir} failed:\n${run.stderr}`);
  return run.stdout;
}

export function parseManifests(yamlText: string): K8sObject[] {
  return parseAllDocuments(yamlText).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`rendered YAML does not parse: ${doc.errors[0]?.message}`);
    return doc.toJS() as K8sObject;
  });
}

/**
 * Checks rendered manifests against the Kubernetes API schemas offline (PyPI kubernetes-validate, in .tools/venv),
 * strictly: an unknown (misspelled) field fails. Returns the validator's complaints, none when valid.
 */
export function validateManifests(yamlText: string, version = kubernetesVersion): string[] {
  const validator = join(repoRoot, '.tools/venv/bin/kubernetes-validate');
  if (!existsSync(validator))
    throw new Error(`${validator} is missing: run bash tools/install.sh (tools/requirements.txt has it)`);
  const dir = mkdtempSync(join(tmpdir(), 'fleet-k8s-'));
  try {
    const file = join(dir, 'rendered.yaml');
    writeFileSync(file, yamlText);
    const run = spawnSync(validator, ['--strict', '--quiet', '-k', version, file], { encoding: 'utf8' });
    if (run.error) throw run.error;
    const complaints = `${run.stdout}${run.stderr}`.split('\n').filter((l) => l.trim() !== '');
    if (run.status !== 0 && complaints.length === 0) complaints.push(`kubernetes-validate exited ${run.status}`);
    return complaints;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The Fleet processes the deployment files run (compose, Kubernetes), by the build entry their command starts: how
 * each reads its config and how long it takes to stop with it. Shared by the tests that check those files.
 */
import { parseConfig } from '@fleet/config';
import { HubConfig } from '@fleet/hub';
import { NetboxAgentConfig, netboxAgentShutdownGraceS } from '@fleet/netbox-agent';
import { SatelliteConfig, satelliteShutdownGraceS } from '@fleet/satellite';
import { AgentConfig, agentShutdownGraceS } from '@fleet/workflow-agent';
import { distEntry } from '../../tools/lib/build-entries.js';

export interface DeployedProcess {
  parse: (raw: unknown, source: string) => unknown;
  graceS: (raw: unknown, source: string) => number;
}

function processSpec<C>(parse: (raw: unknown, source: string) => C, graceS: (config: C) => number): DeployedProcess {
  return { parse, graceS: (raw, source) => graceS(parse(raw, source)) };
}

export const deployedProcesses: Record<string, DeployedProcess> = {
  [distEntry('apps/hub/src/main.ts')]: processSpec(
    (raw, source) => parseConfig(HubConfig, raw, source),
    (c) => c.http.shutdownGraceS,
  ),
  [distEntry('apps/workflow-agent/src/main.ts')]: processSpec(
    (raw, source) => parseConfig(AgentConfig, raw, source),
    () => agentShutdownGraceS,
  ),
  [distEntry('apps/netbox-agent/src/main.ts')]: processSpec(
    (raw, source) => parseConfig(NetboxAgentConfig, raw, source),
    () => netboxAgentShutdownGraceS,
  ),
  [distEntry('apps/satellite/src/main.ts')]: processSpec(
    (raw, source) => parseConfig(SatelliteConfig, raw, source),
    satelliteShutdownGraceS,
  ),
  // Reads the `database` section of the hub's config; a one-shot (or init container) before the hub.
  [distEntry('packages/db/src/migrate-cli.ts')]: processSpec(
    (raw, source) => parseConfig(HubConfig, raw, source),
    () => 0,
  ),
};

/** Config keys naming files or folders a process reads. */
const pathKey = /(File|^path|^dir|Dir)$/;

/** The (key, value) pairs of a config whose key names a file or folder, as the file sets them (defaults aside). */
export function configuredPaths(raw: unknown, out: [string, string][] = []): [string, string][] {
  if (raw && typeof raw === 'object')
    for (const [key, value] of Object.entries(raw)) {
      if (typeof value === 'string' && pathKey.test(key) && value.startsWith('/')) out.push([key, value]);
      else configuredPaths(value, out);
    }
  return out;
}

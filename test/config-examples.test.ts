import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadConfig } from '@fleet/config';
import { NetboxAgentConfig } from '@fleet/netbox-agent';
import { SatelliteConfig } from '@fleet/satellite';
import { SimulatorConfig } from '@fleet/simulators';
import { HubConfig } from '@fleet/hub';
import { AgentConfig } from '@fleet/workflow-agent';
import { repoRoot } from '../tools/lib/processes.js';

// Every config file we ship must load: a broken example is a broken deployment.
describe('shipped config files', () => {
  const cases = [
    ['deploy/config/hub.example.json', HubConfig],
    ['deploy/config/workflow-agent.example.json', AgentConfig],
    ['deploy/config/satellite.example.json', SatelliteConfig],
    ['deploy/config/simulator.example.json', SimulatorConfig],
    ['deploy/config/netbox-agent.example.json', NetboxAgentConfig],
    ['deploy/compose/netbox-agent.json', NetboxAgentConfig],
    ['deploy/compose/hub.json', HubConfig],
    ['deploy/compose/workflow-agent.json', AgentConfig],
    ['deploy/compose/satellite.json', SatelliteConfig],
    ['deploy/compose/simulator.json', SimulatorConfig],
    ['deploy/compose/production/hub.json', HubConfig],
    ['deploy/compose/production/workflow-agent.json', AgentConfig],
    ['deploy/compose/production/netbox-agent.json', NetboxAgentConfig],
    ['deploy/compose/production/satellite-dc-a.json', SatelliteConfig],
    ['deploy/compose/production/satellite-dc-b.json', SatelliteConfig],
  ] as const;
  for (const [file, schema] of cases) {
    it(`${file} is valid`, () => {
      assert.doesNotThrow(() => loadConfig(schema, join(repoRoot, file)));
    });
  }
});

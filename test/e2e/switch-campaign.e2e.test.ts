import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildFwpkg, DESCRIPTOR_UUID } from '@fleet/fwpkg';
import { uploadPackage } from '../harness/firmware.js';
import { Stack, expectStatus } from '../harness/stack.js';

type DeviceRow = {
  device_id: string;
  state: string;
  components: { id: string; status: string; installed?: string | null }[];
};

describe('switch trays in a firmware campaign: updated over NVOS, not through their BMC', () => {
  const stack = new Stack({
    bmcs: 0,
    switches: 3,
    timeScale: 0.02,
    nvosTimings: { firmwareInstallS: 100 },
    power: { heartbeatTimeoutS: 5 },
  });
  before(() => stack.start(), { timeout: 180_000 });
  after(() => stack.stop(), { timeout: 60_000 });

  it(
    'a manifest naming NVUE components (bmc, then fpga) runs the switch firmware workflow on every switch ' +
      'and verifies the versions',
    { timeout: 240_000 },
    async () => {
      // Switch platform firmware carries its version in the file name (as nvfwupd's bundles do).
      const steps = [];
      for (const [component, version] of [
        ['fpga', '0.27.0'],
        ['bmc', '88.0003.1400'],
      ] as const) {
        const pkg = buildFwpkg({
          revision: '1.0',
          packageVersion: version,
          devices: [
            {
              descriptors: [{ type: DESCRIPTOR_UUID, data: '5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a' }],
              applicableComponents: [0],
              imageSetVersion: version,
            },
          ],
          components: [{ classification: 10, identifier: 1, version, image: { size: 4096 } }],
        });
        const uploaded = await uploadPackage(stack, pkg, `nvfw-${component}-${version}.fwpkg`);
        steps.push({ name: component, package_id: uploaded.id, targets: [], components: [{ id: component, version }] });
      }
      expectStatus(201)(
        await stack.api(
          'POST',
          '/v1/firmware/manifests',
          { name: 'nvl-switch', hardware_type: 'switch_gb200_nvidia', steps, default: true },
          stack.tokens.operator,
        ),
      );

      const policy = { canarySize: 0, autoApprove: true, waveSize: 10, maxConcurrentPerSite: 2, failureBudget: 0 };
      const created = expectStatus(202)(
        await stack.api(
          'POST',
          '/v1/firmware-campaigns',
          { name: 'switches', site_id: stack.siteId, policy },
          stack.tokens.operator,
        ),
      ).body as { id: string };
      const done = await stack.waitForJob(created.id, 200_000).catch(() => undefined);
      const devices = (
        await stack.api('GET', `/v1/firmware-campaigns/${created.id}/devices`, undefined, stack.tokens.viewer)
      ).body as { items: DeviceRow[] };
      assert.equal(done?.['state'], 'succeeded', JSON.stringify(devices));
      assert.equal(devices.items.length, 3);
      for (const d of devices.items) assert.equal(d.state, 'succeeded', JSON.stringify(d));
      for (const sw of stack.switches) {
        const state = (await (await fetch(`${stack.simAdminUrl}/switches/${sw.id}`)).json()) as {
          firmware: Record<string, { installed: string }>;
          counters: { firmwareInstallsStarted: number };
        };
        assert.equal(state.firmware['bmc']!.installed, '88.0003.1400', sw.id);
        assert.equal(state.firmware['fpga']!.installed, '0.27.0', sw.id);
        assert.equal(state.counters.firmwareInstallsStarted, 2, `${sw.id}: one install per component`);
      }
      // The compliance view learned the switches' versions from the workflow results.
      const summary = (
        await stack.api(
          'GET',
          `/v1/firmware/compliance/summary?site_id=${stack.siteId}`,
          undefined,
          stack.tokens.viewer,
        )
      ).body as Record<string, unknown>;
      assert.match(JSON.stringify(summary), /"compliant":3/);
    },
  );
});

import { Context } from '@temporalio/activity';
import {
  checkProfile,
  checkRackTopology,
  hardwareProfile,
  traySerialKey,
  type DeviceVerification,
  type HardwareInventory,
  type HardwareInventoryReading,
  type HardwareRecord,
  type TopologyVerdict,
  type VerificationActivities,
  type VerificationStage,
} from '@fleet/domain';
import { RedfishError } from '@fleet/redfish';
import { openDriver } from './context.js';
import { inventoryFailure, readInventory, type HardwareInventoryActivityDeps } from './hardware-inventory.js';
import { heartbeatEveryMs } from '../heartbeat-every.js';

/** Trays read at once by the topology check: a rack's 27 in four rounds, gentle on the BMCs. */
const topologyReadConcurrency = 8;
const maxIssues = 50;
const maxLinksPerIssue = 5;

/**
 * The enrolment's checks (docs/enrolment.md). verifyDevice answers with each stage's outcome instead of failing: a BMC
 * that does not answer or refuses the credentials is the device's result, for the operator to decide on. Only a
 * cancellation, or a failure of the site itself (an unknown credential reference), throws.
 */
export function createVerificationActivities(deps: HardwareInventoryActivityDeps): VerificationActivities {
  return {
    async verifyDevice({ target, netboxSerial }) {
      const stages: DeviceVerification['stages'] = [];
      let startedAt = new Date().toISOString();
      const done = (stage: VerificationStage, passed: boolean, message?: string) => {
        const finishedAt = new Date().toISOString();
        stages.push({ stage, passed, ...(message ? { message } : {}), startedAt, finishedAt });
        startedAt = finishedAt;
        return passed;
      };
      const result = (hardware?: HardwareRecord): DeviceVerification => ({
        deviceId: target.deviceId,
        stages,
        ...(hardware ? { hardware } : {}),
      });
      const ctx = Context.current();
      // Liveness on a clock: a BMC that does not answer keeps the probe waiting for its timeouts, without progress.
      const ticker = setInterval(() => ctx.heartbeat(), heartbeatEveryMs(ctx.info));
      const driver = await openDriver(deps, target).catch((err: unknown) => {
        clearInterval(ticker);
        throw err;
      });
      try {
        // The BMC answers when its power query does; a 401 is an answer too, and says the credentials are refused.
        let probe;
        try {
          probe = await driver.probe();
        } catch (err) {
          if (!(err instanceof RedfishError && err.code === 'Unauthenticated')) throw err;
          done('bmc_reachable', true, 'answered (401)');
          done('credentials_verified', false, `${target.credentialRef} refused: ${err.message}`);
          return result();
        }
        if (!done('bmc_reachable', probe.reachable, probe.reachable ? `power ${probe.powerState}` : probe.reason))
          return result();
        done('credentials_verified', true, `${target.credentialRef} logged in`);
        let reading: HardwareInventoryReading;
        try {
          reading = await readInventory(deps, driver, target);
        } catch (err) {
          if (ctx.cancellationSignal.aborted) throw err;
          done('inventory_read', false, errorMessage(inventoryFailure(err, target.deviceId)));
          return result();
        }
        done('inventory_read', true, `${reading.document.resources} resources, ${reading.document.digest}`);
        const profile = hardwareProfile(
          target.nodeType,
          netboxSerial ? { serials: { [traySerialKey]: netboxSerial } } : {},
        );
        const differences = profile
          ? checkProfile(reading.inventory, profile)
          : [{ code: 'node_type' as const, subject: 'device', message: `no profile for node type ${target.nodeType}` }];
        const hardware = hardwareRecord(reading, differences);
        done(
          'profile_check',
          differences.length === 0,
          differences.length ? differences.map((d) => d.message).join('; ') : `matches ${target.nodeType}`,
        );
        return result(hardware);
      } catch (err) {
        throw inventoryFailure(err, target.deviceId);
      } finally {
        clearInterval(ticker);
        await driver.close();
      }
    },

    async checkRackTopology({ targets }) {
      const ctx = Context.current();
      const inventories: HardwareInventory[] = [];
      let next = 0;
      const worker = async () => {
        while (next < targets.length) {
          const target = targets[next++]!;
          const driver = await openDriver(deps, target);
          try {
            inventories.push((await readInventory(deps, driver, target)).inventory);
          } catch (err) {
            throw inventoryFailure(err, target.deviceId);
          } finally {
            await driver.close();
          }
          ctx.heartbeat({ read: inventories.length });
        }
      };
      await Promise.all(Array.from({ length: Math.min(topologyReadConcurrency, targets.length) }, worker));
      const report = checkRackTopology(inventories);
      const ids = new Set(targets.map((t) => t.deviceId));
      return {
        complete: report.complete,
        links: report.links,
        expectedLinks: report.expectedLinks,
        issuesTotal: report.issues.length,
        issues: report.issues.slice(0, maxIssues).map((issue) => {
          const deviceId = issue.subject.split(' ')[0]!;
          return {
            ...issue,
            ...(issue.links ? { links: issue.links.slice(0, maxLinksPerIssue) } : {}),
            ...(ids.has(deviceId) ? { deviceId } : {}),
          };
        }),
      } satisfies TopologyVerdict;
    },
  };
}

/** What the hub keeps of a read: identity, summaries, the main parts by serial, and the profile's differences. */
export function hardwareRecord(
  reading: HardwareInventoryReading,
  differences: HardwareRecord['differences'],
): HardwareRecord {
  const inv = reading.inventory;
  const id = inv.identity;
  const opt = <K extends string, V>(key: K, value: V | undefined) =>
    (value === undefined ? {} : { [key]: value }) as Partial<Record<K, V>>;
  return {
    readAt: new Date().toISOString(),
    document: reading.document,
    ...opt('manufacturer', id.manufacturer),
    ...opt('model', id.model),
    ...opt('sku', id.sku),
    ...opt('partNumber', id.partNumber),
    ...opt('serialNumber', id.serialNumber),
    ...opt('assetTag', id.assetTag),
    ...opt('biosVersion', id.biosVersion),
    ...opt('cpuCount', inv.summary.cpuCount),
    ...opt('gpuCount', inv.summary.gpuCount),
    ...opt('memoryGiB', inv.summary.memoryGiB),
    ...opt('gpuMemoryGiB', inv.summary.gpuMemoryGiB),
    parts: [...inv.cpus, ...inv.gpus, ...inv.nvswitches, ...inv.powerSupplies].map((p) => ({
      id: p.id,
      kind: p.kind,
      ...opt('model', p.model),
      ...opt('partNumber', p.partNumber),
      ...opt('serialNumber', p.serialNumber),
    })),
    nics: inv.nics.length,
    firmwareComponents: inv.firmware.length,
    nvlinkPorts: inv.nvlinkPorts.length,
    ...(inv.location
      ? {
          location: {
            ...opt('rack', inv.location.chassisSerialNumber),
            ...opt('slot', inv.location.slotNumber),
          },
        }
      : {}),
    differences,
  };
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

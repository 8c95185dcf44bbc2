import { createHash } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { BmcTarget, HardwareInventoryActivities, HardwareInventoryReading } from '@fleet/domain';
import type { NodeDriver } from '@fleet/drivers';
import { RedfishError } from '@fleet/redfish';
import { openDriver, type DeviceActivityDeps } from './context.js';
import { toActivityFailure } from './failures.js';

/**
 * Where the Redfish documents of inventory reads go, by digest (as firmware packages come from the hub by digest):
 * only the digest and the parsed fields travel through Temporal.
 */
export interface InventoryDocumentStore {
  put(digest: string, body: Buffer, opts: { signal: AbortSignal }): Promise<void>;
}

export type HardwareInventoryActivityDeps = DeviceActivityDeps & { documents?: InventoryDocumentStore };

/** What a read heartbeats: how many Redfish resources it has read so far. */
export interface HardwareInventoryHeartbeat {
  resources: number;
}

/** A compute tray is about 140 resources, a switch tray about 170: beat as the read goes, not on every one. */
const heartbeatEveryMs = 1_000;

/**
 * readHardwareInventory: the device's hardware as its BMC reports it (docs/hardware-inventory.md). Heartbeats the
 * resources read; cancellation stops the read at the next request. Returns the parsed fields and the sha256 digest of
 * the canonical JSON of every resource read, which goes to the document store when the site has one. Failures are
 * ApplicationFailures typed by job error code, naming the device, the BMC, the URI and the cause.
 */
export function createHardwareInventoryActivity(deps: HardwareInventoryActivityDeps): HardwareInventoryActivities {
  return {
    async readHardwareInventory({ target }) {
      const driver = await openDriver(deps, target);
      try {
        return await readInventory(deps, driver, target);
      } catch (err) {
        throw inventoryFailure(err, target.deviceId);
      } finally {
        await driver.close();
      }
    },
  };
}

/**
 * One read of the device's inventory through an open driver, heartbeating the resources read; the canonical document
 * goes to the document store when the site has one. Throws the driver's errors as they are.
 */
export async function readInventory(
  deps: HardwareInventoryActivityDeps,
  driver: NodeDriver,
  target: BmcTarget,
): Promise<HardwareInventoryReading> {
  const ctx = Context.current();
  let lastBeat = 0;
  const onProgress = (resources: number) => {
    if (Date.now() - lastBeat < heartbeatEveryMs) return;
    lastBeat = Date.now();
    ctx.heartbeat({ resources } satisfies HardwareInventoryHeartbeat);
  };
  const { inventory, resources } = await driver.readHardwareInventory({ onProgress });
  const body = Buffer.from(canonicalJson(resources));
  const digest = `sha256:${createHash('sha256').update(body).digest('hex')}`;
  await deps.documents?.put(digest, body, { signal: ctx.cancellationSignal });
  const document = { digest, bytes: body.length, resources: Object.keys(resources).length };
  return { deviceId: target.deviceId, inventory, document };
}

/** A Redfish failure says which BMC, URI and cause; this says which device and what was being done as well. */
export function inventoryFailure(err: unknown, deviceId: string): unknown {
  const failure = toActivityFailure(err, deviceId);
  if (!(err instanceof RedfishError) || !(failure instanceof ApplicationFailure)) return failure;
  return ApplicationFailure.create({
    type: failure.type ?? 'INTERNAL',
    message: `${deviceId}: reading the hardware inventory: ${err.message}`,
    details: failure.details ? [...failure.details] : [],
    nonRetryable: failure.nonRetryable === true,
    cause: err,
  });
}

/**
 * JSON with object keys sorted at every level and no whitespace (as RFC 8785 orders them), so the same resources give
 * the same bytes, and the same digest, whatever order the BMC wrote their properties in.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value).sort()) out[k] = sortKeys((value as Record<string, unknown>)[k]);
  return out;
}

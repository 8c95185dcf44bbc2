import { z } from 'zod';
import { faultCleared, faultDetected } from './announce.js';
import type { SimulatedBmc } from './bmc.js';
import { computeParts, CPUS, cpuMemoryId, GPUS, LEAK_DETECTORS, linkUp } from './profiles/compute-parts.js';
import { gpuId, nvlinkId } from './rack.js';
import { PartFault, PartFaults, PartSwap, partKey, partProblem, type ActiveFault } from './tray-health.js';

/**
 * The admin API's view of a device's health (mounted under /bmcs/:id/health in admin.ts):
 *
 *   GET    health               the burn-in verdict: {device, verdict: pass|fail, failures[], …parts}
 *   GET    health/faults        the injected faults
 *   POST   health/faults        inject one fault (PartFault: {part: gpu|memory|nvlink|leak|psu|thermal, …, health?,
 *                                reason?})
 *   PUT    health/faults        replace every fault ({faults: PartFault[]})
 *   DELETE health/faults        clear every fault (the device is healthy again)
 *   POST   health/swap          replace a part (PartSwap: {part: gpu|cpu|memory, …}): it gets a new serial number
 *   GET    health/unresponsive  {unresponsive: {mode, clearOnReboot, answersManagerReset, since} | null}
 *   PUT    health/unresponsive  the BMC stops answering Redfish ({mode?: timeout|reset, clearOnReboot?,
 *                                answersManagerReset?}: see Unresponsive in bmc.ts)
 *   DELETE health/unresponsive  it answers again
 *
 * Compute trays take GPU, memory, NVLink, leak and thermal faults and part swaps; power shelves PSU and thermal
 * faults; any other fault or swap answers 409. Every injected, replaced or cleared fault is logged and sent to event
 * subscribers (announce.ts).
 */
type Result = [number, unknown?];

const Unresponsive = z
  .object({
    mode: z.enum(['timeout', 'reset']).default('timeout'),
    clearOnReboot: z.boolean().default(false),
    answersManagerReset: z.boolean().default(false),
  })
  .strict()
  .refine((u) => u.clearOnReboot || !u.answersManagerReset, {
    message: 'answersManagerReset needs clearOnReboot: a reset that does not clear the fault changes nothing',
  });

export async function healthRoute(
  bmc: SimulatedBmc,
  method: string,
  rest: string[],
  readBody: () => Promise<unknown>,
): Promise<Result | undefined> {
  const sub = rest.join('/');
  if (sub === '' && method === 'GET') return [200, healthReport(bmc)];
  if (sub === 'unresponsive') return unresponsiveRoute(bmc, method, readBody);
  if (sub !== 'faults' && sub !== 'swap') return undefined;
  const parts = bmc.profile.parts;
  if (!parts || (sub === 'swap' && !parts.swaps))
    return [
      409,
      { error: `${bmc.spec.id} (${bmc.profile.kind}) has no parts to ${sub === 'swap' ? 'swap' : 'fault'}` },
    ];
  const health = bmc.health();
  if (sub === 'faults' && method === 'GET') return [200, { items: health.list() }];
  if (sub === 'faults' && method === 'DELETE') {
    for (const [key, f] of health.clear()) faultCleared(bmc, key, f);
    return [204];
  }
  if (sub === 'faults' && (method === 'POST' || method === 'PUT')) {
    const parsed = (method === 'POST' ? PartFault : PartFaults).safeParse(await readBody());
    if (!parsed.success) return [400, { error: issues(parsed.error.issues) }];
    const faults = 'faults' in parsed.data ? parsed.data.faults : [parsed.data];
    const foreign = faults.find((f) => !parts.faults.includes(f.part));
    if (foreign) return [409, { error: `${bmc.spec.id} (${bmc.profile.kind}) takes no ${foreign.part} faults` }];
    const problem = faults.map((f) => partProblem(parts, f)).find(Boolean);
    if (problem) return [400, { error: problem }];
    const before = method === 'PUT' ? health.clear() : [];
    const injected = new Map(faults.map((f) => health.inject(f)));
    for (const [key, f] of before) if (!injected.has(key)) faultCleared(bmc, key, f);
    for (const [key, f] of injected) faultDetected(bmc, key, f);
    return [200, { items: health.list() }];
  }
  if (sub === 'swap' && method === 'POST') {
    const parsed = PartSwap.safeParse(await readBody());
    if (!parsed.success) return [400, { error: issues(parsed.error.issues) }];
    const problem = partProblem(parts, parsed.data);
    if (problem) return [400, { error: problem }];
    const s = parsed.data;
    const key =
      s.part === 'gpu' ? partKey.gpu(s.gpu) : s.part === 'cpu' ? partKey.cpu(s.cpu) : partKey.memory(s.memory);
    const before = bmc.partSerial(key);
    for (const [k, f] of health.swap(s, parts)) faultCleared(bmc, k, f);
    return [200, { part: key, previousSerialNumber: before, serialNumber: bmc.partSerial(key) }];
  }
  return [405, { error: `${method} not allowed on health/${sub}` }];
}

async function unresponsiveRoute(bmc: SimulatedBmc, method: string, readBody: () => Promise<unknown>): Promise<Result> {
  if (method === 'GET') return [200, { unresponsive: bmc.unresponsive ?? null }];
  if (method === 'DELETE') {
    bmc.setUnresponsive(undefined);
    return [204];
  }
  if (method !== 'PUT') return [405, { error: `${method} not allowed on health/unresponsive` }];
  const parsed = Unresponsive.safeParse(await readBody());
  if (!parsed.success) return [400, { error: issues(parsed.error.issues) }];
  bmc.setUnresponsive({ ...parsed.data, since: new Date().toISOString() });
  return [200, { unresponsive: bmc.unresponsive }];
}

const issues = (list: { path: PropertyKey[]; message: string }[]) =>
  list.map((i) => `${i.path.map(String).join('.')}: ${i.message}`).join('; ');

const describe = (part: string, f: ActiveFault) => `${part}: ${f.health} (${f.reason})`;

/**
 * What a burn-in job asks before it passes a tray: fail-closed, so a tray whose host is not on (or that has no AC, or
 * whose BMC does not answer) fails as well as one with a fault on any GPU, memory device, NVLink or leak detector.
 */
export function healthReport(bmc: SimulatedBmc): Record<string, unknown> {
  const failures: string[] = [];
  if (bmc.acLost) failures.push('the tray has no AC power');
  else if (bmc.powerState !== 'On') failures.push(`host power is ${bmc.powerState}`);
  if (bmc.unresponsive) failures.push(`the BMC does not answer Redfish (${bmc.unresponsive.mode})`);
  const base = {
    device: bmc.spec.id,
    kind: bmc.profile.kind,
    serialNumber: bmc.serialNumber,
    powerState: bmc.acLost ? 'Off' : bmc.powerState,
  };
  const h = bmc.hasPartFaults ? bmc.health() : undefined;
  const overheating = (h?.list() ?? [])
    .filter((f) => f.part.startsWith('thermal/'))
    .map(({ part, ...f }) => {
      const sensor = part.slice('thermal/'.length);
      failures.push(describe(sensor, f));
      return { sensor, health: f.health, reason: f.reason, since: f.since };
    });
  if (bmc.profile.kind === 'power_shelf') {
    const psus = Array.from({ length: bmc.profile.parts?.psus ?? 0 }, (_, i) => {
      const f = h?.psu(i);
      if (f) failures.push(describe(`PSU_${i}`, f));
      return { id: `PSU_${i}`, health: f?.health ?? 'OK', ...(f ? { reason: f.reason, since: f.since } : {}) };
    });
    return { ...base, verdict: verdict(failures), failures, psus, overheating };
  }
  if (bmc.profile.kind !== 'compute') return { ...base, verdict: verdict(failures), failures };

  const gpus = GPUS.map((g) => {
    const f = h?.gpu(g);
    if (f) failures.push(describe(gpuId(g), f));
    return { ...part(gpuId(g), bmc.partSerial(partKey.gpu(g)), f), present: f?.offBus !== true };
  });
  const cpus = CPUS.map((c) => part(`CPU_${c}`, bmc.partSerial(partKey.cpu(c)), undefined));
  const memory = computeParts.memory.map((id) => {
    const f = h?.memory(id);
    if (f) failures.push(describe(id, f));
    return {
      ...part(id, bmc.partSerial(partKey.memory(id)), f),
      kind: CPUS.map(cpuMemoryId).includes(id) ? 'LPDDR5X' : 'HBM',
    };
  });
  const linkFaults: Record<string, unknown>[] = [];
  let up = 0;
  for (const g of GPUS) {
    for (let l = 0; l < computeParts.nvlinksPerGpu; l++) {
      if (linkUp(bmc, g, l)) up++;
      const f = h?.nvlink(g, l);
      if (!f) continue;
      const id = `${gpuId(g)}/${nvlinkId(l)}`;
      failures.push(describe(`${gpuId(g)} ${nvlinkId(l)}`, f));
      linkFaults.push({ id, gpu: g, port: l, health: f.health, reason: f.reason, linkUp: linkUp(bmc, g, l) });
    }
  }
  const leakDetectors = LEAK_DETECTORS.map((d, i) => {
    const f = h?.leak(i);
    if (f) failures.push(describe(d.id, f));
    return { id: d.id, state: f?.health ?? 'OK', ...(f ? { reason: f.reason, since: f.since } : {}) };
  });
  return {
    ...base,
    verdict: verdict(failures),
    failures,
    gpus,
    cpus,
    memory,
    nvlink: { ports: GPUS.length * computeParts.nvlinksPerGpu, up, faults: linkFaults },
    leakDetectors,
    overheating,
  };
}

const verdict = (failures: string[]) => (failures.length === 0 ? 'pass' : 'fail');

function part(id: string, serialNumber: string, f: ActiveFault | undefined): Record<string, unknown> {
  return { id, serialNumber, health: f?.health ?? 'OK', ...(f ? { reason: f.reason, since: f.since } : {}) };
}

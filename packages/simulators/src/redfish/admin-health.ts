import type { SimulatedBmc } from './bmc.js';
import { computeParts, CPUS, cpuMemoryId, GPUS, linkUp } from './profiles/compute-parts.js';
import { gpuId, nvlinkId } from './rack.js';
import { PartFault, PartFaults, PartSwap, partKey, partProblem, type ActiveFault } from './tray-health.js';

/**
 * The admin API's view of a tray's health (mounted under /bmcs/:id/health in admin.ts):
 *
 *   GET    health            the burn-in verdict: {device, verdict: pass|fail, failures[], gpus, cpus, memory, nvlink}
 *   GET    health/faults     the injected faults
 *   POST   health/faults     inject one fault (PartFault: {part: gpu|memory|nvlink, …, health?, reason?})
 *   PUT    health/faults     replace every fault ({faults: PartFault[]})
 *   DELETE health/faults     clear every fault (the tray is healthy again)
 *   POST   health/swap       replace a part (PartSwap: {part: gpu|cpu|memory, …}): it gets a new serial number
 *
 * Faults and swaps apply to compute trays; any other BMC answers 409 for them and reports no parts.
 */
type Result = [number, unknown?];

export async function healthRoute(
  bmc: SimulatedBmc,
  method: string,
  rest: string[],
  readBody: () => Promise<unknown>,
): Promise<Result | undefined> {
  const sub = rest.join('/');
  if (sub === '' && method === 'GET') return [200, healthReport(bmc)];
  if (sub !== 'faults' && sub !== 'swap') return undefined;
  if (bmc.profile.kind !== 'compute') return [409, { error: `${bmc.spec.id} is not a compute tray: no part faults` }];
  const health = bmc.health();
  if (sub === 'faults' && method === 'GET') return [200, { items: health.list() }];
  if (sub === 'faults' && method === 'DELETE') {
    health.clear();
    return [204];
  }
  if (sub === 'faults' && (method === 'POST' || method === 'PUT')) {
    const parsed = (method === 'POST' ? PartFault : PartFaults).safeParse(await readBody());
    if (!parsed.success) return [400, { error: issues(parsed.error.issues) }];
    const faults = 'faults' in parsed.data ? parsed.data.faults : [parsed.data];
    const problem = faults.map((f) => partProblem(computeParts, f)).find(Boolean);
    if (problem) return [400, { error: problem }];
    if (method === 'PUT') health.clear();
    for (const f of faults) health.inject(f);
    return [200, { items: health.list() }];
  }
  if (sub === 'swap' && method === 'POST') {
    const parsed = PartSwap.safeParse(await readBody());
    if (!parsed.success) return [400, { error: issues(parsed.error.issues) }];
    const problem = partProblem(computeParts, parsed.data);
    if (problem) return [400, { error: problem }];
    const s = parsed.data;
    const key =
      s.part === 'gpu' ? partKey.gpu(s.gpu) : s.part === 'cpu' ? partKey.cpu(s.cpu) : partKey.memory(s.memory);
    const before = bmc.partSerial(key);
    health.swap(s, computeParts);
    return [200, { part: key, previousSerialNumber: before, serialNumber: bmc.partSerial(key) }];
  }
  return [405, { error: `${method} not allowed on health/${sub}` }];
}

const issues = (list: { path: PropertyKey[]; message: string }[]) =>
  list.map((i) => `${i.path.map(String).join('.')}: ${i.message}`).join('; ');

const describe = (part: string, f: ActiveFault) => `${part}: ${f.health} (${f.reason})`;

/**
 * What a burn-in job asks before it passes a tray: fail-closed, so a tray whose host is not on (or that has no AC)
 * fails as well as one with a fault on any GPU, memory device or NVLink.
 */
export function healthReport(bmc: SimulatedBmc): Record<string, unknown> {
  const failures: string[] = [];
  if (bmc.acLost) failures.push('the tray has no AC power');
  else if (bmc.powerState !== 'On') failures.push(`host power is ${bmc.powerState}`);
  const base = {
    device: bmc.spec.id,
    kind: bmc.profile.kind,
    serialNumber: bmc.serialNumber,
    powerState: bmc.acLost ? 'Off' : bmc.powerState,
  };
  if (bmc.profile.kind !== 'compute') return { ...base, verdict: verdict(failures), failures };

  const h = bmc.hasPartFaults ? bmc.health() : undefined;
  const gpus = GPUS.map((g) => {
    const f = h?.gpu(g);
    if (f) failures.push(describe(gpuId(g), f));
    return part(gpuId(g), bmc.partSerial(partKey.gpu(g)), f);
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
  return {
    ...base,
    verdict: verdict(failures),
    failures,
    gpus,
    cpus,
    memory,
    nvlink: { ports: GPUS.length * computeParts.nvlinksPerGpu, up, faults: linkFaults },
  };
}

const verdict = (failures: string[]) => (failures.length === 0 ? 'pass' : 'fail');

function part(id: string, serialNumber: string, f: ActiveFault | undefined): Record<string, unknown> {
  return { id, serialNumber, health: f?.health ?? 'OK', ...(f ? { reason: f.reason, since: f.since } : {}) };
}

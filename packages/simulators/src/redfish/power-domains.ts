import type { SimulatedBmc } from './bmc.js';

const isShelf = (b: SimulatedBmc) => b.profile.kind === 'power_shelf';
/** A shelf feeds its domain while its output is on (or still winding down). */
const feeding = (b: SimulatedBmc) => b.powerState === 'On' || b.powerState === 'PoweringOff';

/**
 * Couples the BMCs of each rack power domain to its power shelves: when no shelf
 * feeds the domain, trays and switch BMCs lose AC; when one does again, they boot.
 */
export function wirePowerDomains(bmcs: Iterable<SimulatedBmc>): void {
  const domains = new Map<string, { shelves: SimulatedBmc[]; fed: SimulatedBmc[] }>();
  for (const b of bmcs) {
    const name = b.spec.powerDomain;
    if (!name) continue;
    const d = domains.get(name) ?? { shelves: [], fed: [] };
    (isShelf(b) ? d.shelves : d.fed).push(b);
    domains.set(name, d);
  }
  for (const d of domains.values()) {
    if (d.shelves.length === 0) continue;
    const follow = () => {
      const powered = d.shelves.some(feeding);
      for (const b of d.fed) {
        if (powered) b.restoreAc();
        else b.loseAc();
      }
    };
    for (const s of d.shelves) s.onPowerChange = follow;
    follow();
  }
}

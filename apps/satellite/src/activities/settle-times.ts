import type { PowerAction } from '@fleet/domain';

/** Settles remembered per node type and action: enough to ride out one slow or fast device. */
const keep = 16;

/**
 * How long the devices of each node type took to settle after a power on or off, so that a settle poll asks the BMC
 * when the change is due instead of all the way through it (docs/reference/rms-behaviours.md, "Settle polling"). The
 * first poll after a reset waits `fraction` of the quickest of the last settles of the same node type and action:
 * - a device slower than that is polled at the usual interval from there on, as before;
 * - a faster one is seen at the first poll, and its settle, recorded, lowers the next wait by `fraction` (devices that
 *   wait together record about the same, so a much faster fleet is followed round by round);
 * - a slower fleet raises it once its quicker settles have left the window.
 * In memory only: a restarted satellite polls from the start until it has seen one settle.
 */
export class SettleTimes {
  private readonly recent = new Map<string, number[]>();

  constructor(private readonly fraction: number) {
    if (!(fraction > 0 && fraction < 1)) throw new RangeError(`settle wait fraction ${fraction} is not in (0, 1)`);
  }

  /** How long to wait after a reset before the first poll, in ms; 0 before any settle of this kind was seen. */
  waitMs(nodeType: string, action: PowerAction): number {
    const seen = this.recent.get(key(nodeType, action));
    return seen ? Math.floor(this.fraction * Math.min(...seen)) : 0;
  }

  /** A device of this type settled `ms` after its reset was sent. */
  record(nodeType: string, action: PowerAction, ms: number): void {
    const k = key(nodeType, action);
    const seen = this.recent.get(k) ?? [];
    seen.push(Math.max(0, ms));
    if (seen.length > keep) seen.shift();
    this.recent.set(k, seen);
  }
}

const key = (nodeType: string, action: PowerAction) => `${nodeType} ${action}`;

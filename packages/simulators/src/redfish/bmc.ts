import type { PowerState } from '@fleet/domain';

export interface BmcSpec {
  id: string;
  /** Loopback address this BMC answers on, e.g. 127.1.0.7. */
  address: string;
  port: number;
  username: string;
  password: string;
  powerState?: 'On' | 'Off';
  serialNumber?: string;
}

export interface Timings {
  /** Seconds from a power-on request to PowerState On (real trays: tens of seconds). */
  powerOnS: number;
  /** Seconds for a graceful shutdown. */
  gracefulShutdownS: number;
  /** Seconds the BMC keeps the tray off during a power cycle. */
  cycleOffS: number;
}

export const defaultTimings: Timings = { powerOnS: 30, gracefulShutdownS: 20, cycleOffS: 5 };

export interface LoggedRequest {
  at: string;
  method: string;
  path: string;
  status: number;
  body?: unknown;
}

const resetTypes = ['On', 'ForceOn', 'ForceOff', 'GracefulShutdown', 'GracefulRestart', 'ForceRestart', 'PowerCycle', 'Nmi'] as const;
export type ResetType = (typeof resetTypes)[number];
export const isResetType = (v: unknown): v is ResetType => resetTypes.includes(v as ResetType);

/**
 * One simulated BMC: the host power state machine and the request log that
 * tests read to assert what was sent to the hardware.
 */
export class SimulatedBmc {
  powerState: PowerState;
  readonly log: LoggedRequest[] = [];
  /** Tail of the per-BMC request chain: a BMC serves one request at a time. */
  queue: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly spec: BmcSpec,
    private readonly timings: Timings,
    private readonly timeScale: number,
  ) {
    this.powerState = spec.powerState ?? 'Off';
  }

  reset(type: ResetType): void {
    switch (type) {
      case 'On':
      case 'ForceOn':
        if (this.powerState === 'Off' || this.powerState === 'PoweringOff') this.transition('PoweringOn', 'On', this.timings.powerOnS);
        return;
      case 'GracefulShutdown':
        if (this.powerState === 'On' || this.powerState === 'PoweringOn') this.transition('PoweringOff', 'Off', this.timings.gracefulShutdownS);
        return;
      case 'ForceOff':
        this.settle('Off');
        return;
      case 'PowerCycle':
      case 'ForceRestart':
      case 'GracefulRestart': {
        const offFor = type === 'GracefulRestart' ? this.timings.gracefulShutdownS : this.timings.cycleOffS;
        this.transition('PoweringOff', 'Off', offFor, () => this.transition('PoweringOn', 'On', this.timings.powerOnS));
        return;
      }
      case 'Nmi':
        return;
    }
  }

  private transition(via: PowerState, to: PowerState, seconds: number, then?: () => void): void {
    clearTimeout(this.timer);
    this.powerState = via;
    this.timer = setTimeout(() => {
      this.powerState = to;
      then?.();
    }, seconds * 1000 * this.timeScale);
    this.timer.unref();
  }

  private settle(state: PowerState): void {
    clearTimeout(this.timer);
    this.powerState = state;
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}

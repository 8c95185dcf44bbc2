/**
 * Day-2 health observation (docs/day2.md): what a satellite's observer reads from a device each interval, the faults
 * it names, and the change between two readings, which is all it delivers. Dependency-free (no zod) so workflow code
 * may use it.
 */
import type { BmcTarget } from './contracts.js';
import type { PowerState } from './power.js';

/** What broke, as remediation playbooks and quarantine rules name it. */
export const faultClasses = ['unreachable', 'credentials', 'gpu', 'psu', 'leak', 'thermal', 'chassis'] as const;
export type FaultClass = (typeof faultClasses)[number];

export type FaultSeverity = 'Warning' | 'Critical';

/** One fault the BMC reports (or, for `unreachable` and `credentials`, the observer itself). */
export interface HealthFault {
  class: FaultClass;
  /** The part, as the BMC names it (`GPU_SXM_3`, `PSU2`, `LeakDetector_1`), or `bmc` for the controller itself. */
  component: string;
  severity: FaultSeverity;
  message: string;
}

/** One reading of one device. */
export interface HealthReading {
  /** The BMC answered. */
  reachable: boolean;
  /** It accepted the device's credentials (undefined when it did not answer). */
  credentialsOk?: boolean;
  powerState?: PowerState;
  /** Sorted by class then component; empty when the device is healthy. */
  faults: HealthFault[];
}

/** A reading of a BMC that does not answer. */
export function unreachableReading(message: string): HealthReading {
  return { reachable: false, faults: [{ class: 'unreachable', component: 'bmc', severity: 'Critical', message }] };
}

/** A reading of a BMC that answers but refuses the device's credentials. */
export function credentialsRefusedReading(message: string): HealthReading {
  return {
    reachable: true,
    credentialsOk: false,
    faults: [{ class: 'credentials', component: 'bmc', severity: 'Critical', message }],
  };
}

const faultKey = (f: HealthFault) => `${f.class}/${f.component}`;

/** Faults in their canonical order, one per class and component (the most severe wins). */
export function normaliseFaults(faults: readonly HealthFault[]): HealthFault[] {
  const byKey = new Map<string, HealthFault>();
  for (const f of faults) {
    const prior = byKey.get(faultKey(f));
    if (!prior || (prior.severity === 'Warning' && f.severity === 'Critical')) byKey.set(faultKey(f), f);
  }
  return [...byKey.values()].sort((a, b) => faultKey(a).localeCompare(faultKey(b)));
}

/** Whether two readings say the same thing (messages aside: a reworded message is not a change). */
export function sameHealth(a: HealthReading | undefined, b: HealthReading): boolean {
  if (!a) return false;
  if (a.reachable !== b.reachable || a.credentialsOk !== b.credentialsOk || a.powerState !== b.powerState) return false;
  if (a.faults.length !== b.faults.length) return false;
  return a.faults.every((f, i) => faultKey(f) === faultKey(b.faults[i]!) && f.severity === b.faults[i]!.severity);
}

/** A change a satellite delivers: the device's whole new reading, as of `observedAt`. */
export interface HealthChange {
  deviceId: string;
  observedAt: string;
  reading: HealthReading;
}

/** The worst severity of a reading's faults, or undefined when it has none. */
export function worstSeverity(reading: HealthReading): FaultSeverity | undefined {
  if (reading.faults.some((f) => f.severity === 'Critical')) return 'Critical';
  return reading.faults.length ? 'Warning' : undefined;
}

/** A device the observer reads: its BMC target. */
export type ObservedDevice = BmcTarget;

export interface ObserveSiteInput {
  siteId: string;
  /** Seconds between the starts of two observation cycles. */
  intervalS: number;
  /** How long one activity run observes before it returns (the workflow then starts the next, or continues as new). */
  runForS: number;
  /** Devices read at once. */
  concurrency: number;
  /**
   * A faulty reading is delivered at each of its first `confirmations` cycles (a rule counts observations), then only
   * when it changes; a healthy one only when it changes.
   */
  confirmations: number;
}

export interface ObserveSiteResult {
  cycles: number;
  /** Readings delivered to the hub. */
  delivered: number;
  /** The slowest cycle, seconds. */
  slowestCycleS: number;
}

export interface ObserverActivities {
  observeSite(input: ObserveSiteInput): Promise<ObserveSiteResult>;
}

/** The observer workflow of a site (one per site, started by the workflow agent). */
export const siteObserverWorkflowId = (siteId: string) => `observer-${siteId}`;

/** The condition a reading sets for each of the health axis's conditions. */
export function healthConditions(reading: HealthReading): {
  type: 'BMCReachable' | 'CredentialsVerified' | 'Healthy';
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
}[] {
  const first = (c: FaultClass) => reading.faults.find((f) => f.class === c);
  const worst = reading.faults.find((f) => f.severity === 'Critical') ?? reading.faults[0];
  return [
    reading.reachable
      ? { type: 'BMCReachable', status: 'True', reason: 'BmcAnswered', message: '' }
      : {
          type: 'BMCReachable',
          status: 'False',
          reason: 'BmcUnreachable',
          message: first('unreachable')?.message ?? '',
        },
    reading.credentialsOk === undefined
      ? { type: 'CredentialsVerified', status: 'Unknown', reason: 'BmcUnreachable', message: '' }
      : reading.credentialsOk
        ? { type: 'CredentialsVerified', status: 'True', reason: 'LoggedIn', message: '' }
        : {
            type: 'CredentialsVerified',
            status: 'False',
            reason: 'CredentialsRefused',
            message: first('credentials')?.message ?? '',
          },
    worst
      ? {
          type: 'Healthy',
          status: 'False',
          reason: faultReasons[worst.class],
          message: reading.faults.map((f) => `${f.component}: ${f.message}`).join('; '),
        }
      : { type: 'Healthy', status: 'True', reason: 'NoFault', message: '' },
  ];
}

/** CamelCase condition reasons per fault class. */
export const faultReasons: Record<FaultClass, string> = {
  unreachable: 'BmcUnreachable',
  credentials: 'CredentialsRefused',
  gpu: 'GpuFault',
  psu: 'PsuFault',
  leak: 'LeakDetected',
  thermal: 'ThermalAlarm',
  chassis: 'ChassisFault',
};

/** The signal that gives a running observer new settings (the workflow agent sends it when its config changed). */
export const observerSettingsSignalName = 'settings';
/** The observer's memo key: its settings, which the workflow agent compares with its config. */
export const observerMemoKey = 'fleet_observer';

/**
 * Whether a reading shows `faultClass` gone (a playbook step's check), or, without one, no critical fault at all (a
 * release's health check). A BMC that does not answer or refuses the credentials is never cleared.
 */
export function healthCleared(reading: HealthReading, faultClass?: FaultClass): boolean {
  if (!reading.reachable || reading.credentialsOk === false) return false;
  return faultClass
    ? !reading.faults.some((f) => f.class === faultClass)
    : !reading.faults.some((f) => f.severity === 'Critical');
}

import type { SimulatedBmc } from '../bmc.js';
import { worst, type Health } from '../tray-health.js';
import { collectionBody, ref, type Tree } from './common.js';
import type { Body } from './types.js';

/**
 * What a chassis measures: `Sensors` and `ThermalSubsystem` → `ThermalMetrics` (its temperatures), and on compute
 * trays `ThermalSubsystem/LeakDetection/LeakDetectors`, shaped after the GH200 capture (Chassis/BMC_0 and HGX_GPU_n
 * sensors, Sensor v1_2 with Thresholds) and bmcweb's leak detectors. Readings are deterministic: they follow the power
 * state, a part that is gone (a GPU off the bus) reads null, and a thermal fault puts a reading past its threshold.
 */
type Thresholds = Partial<Record<'LowerCritical' | 'LowerCaution' | 'UpperCaution' | 'UpperCritical', number>>;

export interface SensorSpec {
  id: string;
  name: string;
  type: 'Temperature' | 'Voltage' | 'Power';
  context: string;
  /** The part it measures (Sensor.RelatedItem). */
  related?: string;
  reading: (bmc: SimulatedBmc) => number | null;
  thresholds?: Thresholds;
}

export interface LeakDetectorSpec {
  id: string;
  name: string;
  context: string;
  state: (bmc: SimulatedBmc) => Health;
}

const UNITS = { Temperature: 'Cel', Voltage: 'V', Power: 'W' } as const;

/** A reading that follows the host: standby while it is off, under load while it is on (simulator values). */
export const hostReads = (off: number, on: number) => (bmc: SimulatedBmc) => (bmc.powerState === 'On' ? on : off);

/** The tray's air inlet, the same on compute and switch trays (it does not follow the host). */
export const inletSensor: SensorSpec = {
  id: 'TEMP_INLET',
  name: 'TEMP INLET',
  type: 'Temperature',
  context: 'Intake',
  reading: () => 25,
  thresholds: { UpperCaution: 40, UpperCritical: 45 },
};

/**
 * What a sensor reads: its spec's value, or, with a thermal fault injected on it, a temperature past the threshold of
 * the fault's health (between UpperCaution and UpperCritical for Warning, above UpperCritical for Critical).
 */
function readingOf(bmc: SimulatedBmc, s: SensorSpec): number | null {
  const reading = s.reading(bmc);
  const fault = bmc.hasPartFaults ? bmc.health().thermal(s.id) : undefined;
  const t = s.thresholds;
  if (!fault || reading === null || t?.UpperCaution === undefined || t.UpperCritical === undefined) return reading;
  return fault.health === 'Critical' ? t.UpperCritical + 2 : (t.UpperCaution + t.UpperCritical) / 2;
}

/** A sensor's health from its thresholds (caution → Warning, critical → Critical); OK without a reading. */
function sensorHealth(reading: number | null, t: Thresholds = {}): Health {
  if (reading === null) return 'OK';
  if (reading >= (t.UpperCritical ?? Infinity) || reading <= (t.LowerCritical ?? -Infinity)) return 'Critical';
  if (reading >= (t.UpperCaution ?? Infinity) || reading <= (t.LowerCaution ?? -Infinity)) return 'Warning';
  return 'OK';
}

/**
 * Adds the chassis's sensors, thermal subsystem and (with detectors) leak detection; answers the links the chassis
 * body carries and the worst health below it (its HealthRollup).
 */
export function addEnvironment(
  tree: Tree,
  chassis: string,
  sensors: readonly SensorSpec[],
  leakDetectors: readonly LeakDetectorSpec[] = [],
): { links: Body; health: (bmc: SimulatedBmc) => Health } {
  const sensorsPath = `${chassis}/Sensors`;
  const thermal = `${chassis}/ThermalSubsystem`;
  const leakPath = `${thermal}/LeakDetection`;
  const detectorsPath = `${leakPath}/LeakDetectors`;
  const sensorPath = (s: SensorSpec) => `${sensorsPath}/${s.id}`;
  const detectorPath = (d: LeakDetectorSpec) => `${detectorsPath}/${d.id}`;
  const temps = sensors.filter((s) => s.type === 'Temperature');
  const sensorsHealth = (bmc: SimulatedBmc, list: readonly SensorSpec[]) =>
    worst(...list.map((s) => sensorHealth(readingOf(bmc, s), s.thresholds)));
  const leakHealth = (bmc: SimulatedBmc) => worst(...leakDetectors.map((d) => d.state(bmc)));

  tree.collection(sensorsPath, 'SensorCollection', 'Sensor Collection', sensors.map(sensorPath));
  for (const s of sensors) {
    tree.add(sensorPath(s), (bmc) => {
      const reading = readingOf(bmc, s);
      return {
        '@odata.id': sensorPath(s),
        '@odata.type': '#Sensor.v1_2_0.Sensor',
        Id: s.id,
        Name: s.name,
        ReadingType: s.type,
        ReadingUnits: UNITS[s.type],
        PhysicalContext: s.context,
        Reading: reading,
        ...(s.thresholds ? { Thresholds: thresholdsBody(s.thresholds) } : {}),
        ...(s.related ? { RelatedItem: [ref(s.related)] } : {}),
        Status: {
          State: reading === null ? 'UnavailableOffline' : 'Enabled',
          Health: sensorHealth(reading, s.thresholds),
        },
      };
    });
  }

  tree.add(thermal, (bmc) => ({
    '@odata.id': thermal,
    '@odata.type': '#ThermalSubsystem.v1_3_0.ThermalSubsystem',
    Id: 'ThermalSubsystem',
    Name: 'Thermal Subsystem',
    Status: { State: 'Enabled', Health: 'OK', HealthRollup: worst(sensorsHealth(bmc, temps), leakHealth(bmc)) },
    ThermalMetrics: ref(`${thermal}/ThermalMetrics`),
    ...(leakDetectors.length > 0 ? { LeakDetection: ref(leakPath) } : {}),
  }));
  tree.add(`${thermal}/ThermalMetrics`, (bmc) => ({
    '@odata.id': `${thermal}/ThermalMetrics`,
    '@odata.type': '#ThermalMetrics.v1_0_0.ThermalMetrics',
    Id: 'ThermalMetrics',
    Name: 'Chassis Thermal Metrics',
    // Excerpt copies of the Sensor resources. The GH200 capture gives each an @odata.id too; the schema's excerpt
    // (SensorArrayExcerpt) has none, so the DMTF validator fails it: DataSourceUri is the standard link.
    TemperatureReadingsCelsius: temps.map((s) => ({
      DataSourceUri: sensorPath(s),
      DeviceName: s.id,
      PhysicalContext: s.context,
      Reading: readingOf(bmc, s),
    })),
  }));

  if (leakDetectors.length > 0) {
    tree.add(leakPath, (bmc) => ({
      '@odata.id': leakPath,
      '@odata.type': '#LeakDetection.v1_0_0.LeakDetection',
      Id: 'LeakDetection',
      Name: 'Leak Detection',
      Status: { State: 'Enabled', Health: 'OK', HealthRollup: leakHealth(bmc) },
      LeakDetectors: ref(detectorsPath),
    }));
    tree.add(detectorsPath, () =>
      collectionBody(
        detectorsPath,
        'LeakDetectorCollection',
        'Leak Detector Collection',
        leakDetectors.map(detectorPath),
      ),
    );
    for (const d of leakDetectors) {
      tree.add(detectorPath(d), (bmc) => ({
        '@odata.id': detectorPath(d),
        '@odata.type': '#LeakDetector.v1_0_0.LeakDetector',
        Id: d.id,
        Name: d.name,
        LeakDetectorType: 'Moisture',
        PhysicalContext: d.context,
        DetectorState: d.state(bmc),
        Status: { State: 'Enabled', Health: d.state(bmc) },
      }));
    }
  }

  return {
    links: { Sensors: ref(sensorsPath), ThermalSubsystem: ref(thermal) },
    health: (bmc) => worst(sensorsHealth(bmc, sensors), leakHealth(bmc)),
  };
}

function thresholdsBody(t: Thresholds): Body {
  return Object.fromEntries(Object.entries(t).map(([k, v]) => [k, { Reading: v }]));
}

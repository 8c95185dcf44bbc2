import type { SimulatedBmc } from '../bmc.js';
import { cpuPath, gpuPath, gpuPresent, LEAK_DETECTORS, leakState, SYSTEM } from './compute-parts.js';
import { addEnvironment, hostReads, inletSensor, type SensorSpec } from './environment.js';
import type { Tree } from './common.js';

/**
 * A compute tray's sensors, named as in the GH200 capture: board temperatures on the tray chassis (BMC_0, which also
 * carries the leak detectors), a temperature per GPU and its HBM on HGX_GPU_n, one per CPU on HGX_CPU_n. Readings are
 * simulator values: standby temperatures while the host is off, load temperatures while it is on.
 */
const chassis = (id: string) => `/redfish/v1/Chassis/${id}`;

const TRAY: SensorSpec[] = [
  inletSensor,
  {
    id: 'TEMP_IO_BOARD',
    name: 'TEMP IO BOARD',
    type: 'Temperature',
    context: 'SystemBoard',
    related: SYSTEM,
    reading: hostReads(26, 38.5),
    thresholds: { UpperCaution: 80, UpperCritical: 85 },
  },
  {
    id: 'TEMP_PDB',
    name: 'TEMP PDB',
    type: 'Temperature',
    context: 'PowerSupply',
    related: SYSTEM,
    reading: hostReads(27.5, 41.25),
    thresholds: { UpperCaution: 85, UpperCritical: 95 },
  },
];

/** The tray chassis's temperature sensors: the ones a thermal fault may be injected on. */
export const trayTemperatureSensors = TRAY.filter((s) => s.type === 'Temperature').map((s) => s.id);

export function addTrayEnvironment(tree: Tree) {
  return addEnvironment(
    tree,
    chassis('BMC_0'),
    TRAY,
    LEAK_DETECTORS.map((d, i) => ({ ...d, state: (bmc: SimulatedBmc) => leakState(bmc, i) })),
  );
}

export function addGpuEnvironment(tree: Tree, g: number) {
  // A GPU off the bus answers nothing: its sensors read null.
  const gpuReads = (off: number, on: number) => (bmc: SimulatedBmc) =>
    gpuPresent(bmc, g) ? hostReads(off, on)(bmc) : null;
  return addEnvironment(tree, chassis(`HGX_GPU_${g}`), [
    {
      id: `HGX_GPU_${g}_Temp_0`,
      name: `HGX GPU ${g} Temp 0`,
      type: 'Temperature',
      context: 'GPU',
      related: gpuPath(g),
      reading: gpuReads(27, 45 + g),
      thresholds: { UpperCaution: 85, UpperCritical: 90 },
    },
    {
      id: `HGX_GPU_${g}_DRAM_0_Temp_0`,
      name: `HGX GPU ${g} DRAM 0 Temp 0`,
      type: 'Temperature',
      context: 'GPU',
      related: gpuPath(g),
      reading: gpuReads(28, 52 + g),
      thresholds: { UpperCaution: 95, UpperCritical: 105 },
    },
  ]);
}

export function addCpuEnvironment(tree: Tree, c: number) {
  return addEnvironment(tree, chassis(`HGX_CPU_${c}`), [
    {
      id: `HGX_CPU_${c}_Temp_0`,
      name: `HGX CPU ${c} Temp 0`,
      type: 'Temperature',
      context: 'CPU',
      related: cpuPath(c),
      reading: hostReads(27, 48 + c),
      thresholds: { UpperCaution: 90, UpperCritical: 100 },
    },
  ]);
}

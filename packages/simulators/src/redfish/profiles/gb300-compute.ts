import { computeTray } from './compute-tray.js';

/** GB300 NVL compute tray (RMS node type compute_gb300_nvidia; NVIDIA bundle P4059). */
export const gb300Compute = computeTray({
  id: 'gb300-compute',
  label: 'NVIDIA GB300 NVL compute tray',
  model: 'GB300 NVL',
  product: 'P4059',
  sku: 'P4059-0001',
  partNumber: '699-24059-0001-000',
  baseboardPartNumber: '692-24059-0000-000',
  parts: {
    cpuModel: 'Grace A02',
    cpuCores: 72,
    cpuPartNumber: '900-2G548-0001-000',
    cpuMemoryMiB: 491_520,
    gpuModel: 'NVIDIA GB300',
    gpuPartNumber: '31C2-886-A1',
    gpuMemoryMiB: 284_208,
    gpuMemoryPartNumber: '316-1436-000',
    nvlinkGbps: 400,
  },
  devices: { bmcTray: 'b0b1c2d3e4f5460788990011223344aa', computeTray: 'b0b1c2d3e4f5460788990011223344ab' },
  versions: {
    bmc: 'GB300Nvl-25.09-2',
    erot: '01.04.0010.0000_n04',
    cpld: '0.2C',
    hmc: 'GB300Nvl-25.09-2',
    cpu: '02.05.03',
    gpu: '97.10.2B.00.02',
    fpga: '2.04',
    uefi: '02.05.03',
    inforom: 'G553.0201.00.03',
  },
  stamp: 0x25090200,
});

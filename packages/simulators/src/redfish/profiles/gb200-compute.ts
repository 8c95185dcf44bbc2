import { computeTray } from './compute-tray.js';

/** GB200 NVL compute tray (RMS node type compute_gb200_nvidia, HCL firmware 1.3.2GA). */
export const gb200Compute = computeTray({
  id: 'gb200-compute',
  label: 'NVIDIA GB200 NVL compute tray',
  model: 'GB200 NVL',
  product: 'P4975',
  sku: 'P4975-0001',
  partNumber: '699-24975-0001-000',
  baseboardPartNumber: '692-24764-0000-000',
  parts: {
    cpuModel: 'Grace A02',
    cpuCores: 72,
    cpuPartNumber: '900-2G548-0001-000',
    cpuMemoryMiB: 491_520,
    gpuModel: 'NVIDIA GB200',
    gpuPartNumber: '2941-886-A1',
    gpuMemoryMiB: 189_471,
    gpuMemoryPartNumber: '316-1316-000',
    nvlinkGbps: 400,
  },
  devices: { bmcTray: 'a0b1c2d3e4f5460788990011223344aa', computeTray: 'a0b1c2d3e4f5460788990011223344ab' },
  versions: {
    bmc: 'GB200Nvl-25.06-4',
    erot: '01.04.0008.0000_n04',
    cpld: '0.1A',
    hmc: 'GB200Nvl-25.06-4',
    cpu: '02.04.07',
    gpu: '97.00.A0.00.01',
    fpga: '1.60',
    uefi: '02.04.07',
    inforom: 'G548.0201.00.07',
  },
  stamp: 0x25060400,
});

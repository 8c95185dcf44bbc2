import { powerShelf } from './power-shelf.js';

/** LITE-ON NVL72 power shelf (RMS node types powershelf_gb200_liteon / powershelf_gb300_liteon). */
export const liteonPowerShelf = powerShelf({
  id: 'powershelf-liteon',
  label: 'LITE-ON power shelf',
  vendor: 'LITE-ON',
  shelfModel: 'PF-1333-13RD',
  shelfPartNumber: 'PF-1333-13RD-A01',
  psuModel: 'PS-5501-1L',
  psuPartNumber: 'PS-5501-1L-A01',
  psuCapacityW: 5500,
  devices: { pmc: 'c1e0a5b2d3f4470a9b8c7d6e5f4a3b21', psu: 'c1e0a5b2d3f4470a9b8c7d6e5f4a3b22' },
  versions: { pmc: '2.1.7', psu: '1.4.2' },
  stamp: 0x02010700,
  legacyPower: true,
});

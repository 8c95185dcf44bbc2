import { powerShelf } from './power-shelf.js';

/**
 * Delta NVL72 power shelf (RMS node types powershelf_gb200_delta / powershelf_gb300_delta). The PMC
 * device UUID is the one RMS uses to recognise Delta PMC firmware (docs/reference/rms-behaviours.md#power-shelves).
 */
export const deltaPowerShelf = powerShelf({
  id: 'powershelf-delta',
  label: 'Delta power shelf',
  vendor: 'Delta',
  shelfModel: 'AHE50V2200A',
  shelfPartNumber: 'AHE50V2200A-01',
  psuModel: 'ECD16010092',
  psuPartNumber: 'ECD16010092-01',
  psuCapacityW: 5500,
  devices: { pmc: '0b4e248c8bcf41379b99d0394c808ba5', psu: '0b4e248c8bcf41379b99d0394c808ba6' },
  versions: { pmc: '1.12.0', psu: '2.0.5' },
  stamp: 0x010c0000,
  legacyPower: false,
});

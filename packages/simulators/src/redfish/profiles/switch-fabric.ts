import type { SimulatedBmc } from '../bmc.js';
import {
  gpuId,
  gpuLinkOf,
  nvl72,
  nvlinkId,
  nvswitchId,
  portsPerNvswitch,
  positionOf,
  remotePortId,
  slotNumberOf,
} from '../rack.js';
import { ref, statusOf, type Tree } from './common.js';
import { linkUp, nvlinkPortBody } from './compute-parts.js';
import type { Body } from './types.js';

/**
 * The switch tray's side of the NVLink fabric: Fabrics/NVLinkFabric_0 with one Switch per NVSwitch chip and one Port
 * per GPU of the rack. A port's far end comes from the rack layout (RemotePortId); its link state mirrors the
 * compute tray it is cabled to, when the simulator plays that tray: up while both hosts are on and no Critical fault
 * was injected on that GPU link. The GH200 capture has an empty Switches collection (no NVSwitch on GH200); the shape
 * follows the DMTF Fabric/Switch/Port schemas and NVIDIA's HGX naming (NVSwitch_n, NVLink_n).
 */
export const FABRIC = '/redfish/v1/Fabrics/NVLinkFabric_0';
const range = (n: number) => Array.from({ length: n }, (_, i) => i);
export const NVSWITCHES = range(nvl72.nvswitchesPerSwitchTray);
const PORTS = range(portsPerNvswitch);
export const switchPath = (c: number) => `${FABRIC}/Switches/${nvswitchId(c)}`;
export const switchPortPath = (c: number, q: number) => `${switchPath(c)}/Ports/${nvlinkId(q)}`;

export interface SwitchData {
  model: string;
  partNumber: string;
  nvlinkGbps: number;
}

export function addSwitchFabric(tree: Tree, d: SwitchData): void {
  tree.collection('/redfish/v1/Fabrics', 'FabricCollection', 'Fabric Collection', [FABRIC]);
  tree.add(FABRIC, () => ({
    '@odata.id': FABRIC,
    '@odata.type': '#Fabric.v1_2_0.Fabric',
    Id: 'NVLinkFabric_0',
    Name: 'NVLinkFabric_0 Resource',
    FabricType: 'NVLink',
    Status: statusOf('Enabled', 'OK'),
    Switches: ref(`${FABRIC}/Switches`),
  }));
  tree.collection(`${FABRIC}/Switches`, 'SwitchCollection', 'Switch Collection', NVSWITCHES.map(switchPath));
  for (const c of NVSWITCHES) {
    tree.add(switchPath(c), (bmc) => {
      const p = positionOf(bmc, 'switch');
      return {
        '@odata.id': switchPath(c),
        '@odata.type': '#Switch.v1_9_0.Switch',
        Id: nvswitchId(c),
        Name: nvswitchId(c),
        SwitchType: 'NVLink',
        Manufacturer: 'NVIDIA',
        Model: d.model,
        PartNumber: d.partNumber,
        SerialNumber: bmc.partSerial(`nvswitch/${c}`),
        PowerState: bmc.powerState,
        Status: statusOf(bmc.powerState === 'On' ? 'Enabled' : 'StandbyOffline', 'OK'),
        Ports: ref(`${switchPath(c)}/Ports`),
        Links: { Chassis: ref(`/redfish/v1/Chassis/${nvswitchId(c)}`) },
        // Where the tray sits, in the block compute trays carry on their GPUs, so one reader places both kinds.
        Oem: {
          Nvidia: {
            MNNVLinkTopology: {
              ChassisSerialNumber: p.chassisSerialNumber,
              TraySlotNumber: p.traySlotNumber,
              TraySlotIndex: p.traySlotIndex,
              TraySerialNumber: bmc.serialNumber,
            },
          },
        },
      };
    });
    tree.collection(
      `${switchPath(c)}/Ports`,
      'PortCollection',
      'NVLink Port Collection',
      PORTS.map((q) => switchPortPath(c, q)),
    );
    for (const q of PORTS) tree.add(switchPortPath(c, q), (bmc) => switchPortBody(bmc, d, c, q));
  }
}

function switchPortBody(bmc: SimulatedBmc, d: SwitchData, c: number, q: number): Body {
  const position = positionOf(bmc, 'switch');
  const far = gpuLinkOf({ switchIndex: position.traySlotIndex, nvswitch: c, port: q });
  const tray = bmc.rack?.compute.get(far.trayIndex);
  const up = bmc.powerState === 'On' && tray !== undefined && !tray.acLost && linkUp(tray, far.gpu, far.link);
  // A fault on the link shows at both ends; the compute tray is where it is injected.
  const fault = tray?.hasPartFaults ? tray.health().nvlink(far.gpu, far.link) : undefined;
  return nvlinkPortBody({
    path: switchPortPath(c, q),
    port: q,
    type: 'UpstreamPort',
    up,
    gbps: d.nvlinkGbps,
    remotePortId: remotePortId(
      position.chassisSerialNumber,
      slotNumberOf('compute', far.trayIndex),
      gpuId(far.gpu),
      nvlinkId(far.link),
    ),
    status: statusOf(bmc.powerState === 'On' ? 'Enabled' : 'StandbyOffline', fault?.health ?? 'OK'),
  });
}

import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { planFleet, simulatedSwitches, simulatorProfile } from './layout.js';
import { NetboxWriter, writeFleet } from './netbox-writer.js';

// Creates NVL72 sites in NetBox and writes the matching simulator config.
const usage = `usage: tsx tools/fleetgen/main.ts --netbox URL --token-file FILE [options]

Creates NVL72 sites in NetBox and writes the matching simulator config. Options (defaults in brackets):
  --sites N [1]  --racks N [1]  --rack-types gb200_nvl72,gb300_nvl72  --site-prefix P [site]
  --first-address 127.20.0.1  --bmc-port 8443  --bmc-password-file FILE  --credential-ref bmc/default
  --simulator-config out.json   write the simulator config for the generated BMCs and switches`;
const parsed = (() => {
  try {
    return parseArgs({
      options: {
        help: { type: 'boolean', short: 'h' },
        netbox: { type: 'string' },
        'token-file': { type: 'string' },
        sites: { type: 'string', default: '1' },
        racks: { type: 'string', default: '1' },
        'rack-types': { type: 'string', default: 'gb200_nvl72,gb300_nvl72' },
        'first-address': { type: 'string', default: '127.20.0.1' },
        'bmc-port': { type: 'string', default: '8443' },
        'bmc-password-file': { type: 'string' },
        'credential-ref': { type: 'string', default: 'bmc/default' },
        'simulator-config': { type: 'string' },
        'site-prefix': { type: 'string', default: 'site' },
      },
    });
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${usage}`);
    process.exit(2);
  }
})();
const { values } = parsed;
if (values.help) {
  console.log(usage);
  process.exit(0);
}
if (!values.netbox || !values['token-file']) {
  console.error(usage);
  process.exit(2);
}
const { readFileSync } = await import('node:fs');
const fleet = planFleet({
  sites: Number(values.sites),
  racksPerSite: Number(values.racks),
  rackTypes: values['rack-types']!.split(',') as ('gb200_nvl72' | 'gb300_nvl72')[],
  firstAddress: values['first-address']!,
  sitePrefix: values['site-prefix']!,
});
const port = Number(values['bmc-port']);
const writer = new NetboxWriter(values.netbox, readFileSync(values['token-file'], 'utf8').trim());
const started = Date.now();
// A switch tray's NVOS answers on its BMC's loopback address: NVUE on the BMC port + 1, SSH on + 2.
const nvos = { nvuePort: port + 1, sshPort: port + 2 };
const written = await writeFleet(writer, fleet, {
  managementProfile: `redfish-http:${port}`,
  credentialRef: values['credential-ref']!,
  nvos,
});
if (values['simulator-config']) {
  const password = values['bmc-password-file'] ? readFileSync(values['bmc-password-file'], 'utf8').trim() : 'change-me';
  const switches = simulatedSwitches(fleet, { ...nvos, password });
  writeFileSync(
    values['simulator-config'],
    JSON.stringify(
      {
        timeScale: 0.1,
        admin: { port: 0 },
        bmcs: fleet.devices.map((d) => ({
          id: d.name,
          address: d.ip,
          port,
          username: 'admin',
          password,
          profile: simulatorProfile(d),
          powerDomain: `${d.site}/${d.rack}`,
        })),
        switches,
      },
      null,
      2,
    ),
  );
}
console.log(
  JSON.stringify({
    sites: fleet.sites.length,
    racks: fleet.racks.length,
    devices: written.deviceIds.size,
    netbox_requests: written.requests,
    seconds: (Date.now() - started) / 1000,
  }),
);

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configPathFromArgs, createLogger, exitOnHelp, handleShutdown, loadConfig, serviceUsage } from '@fleet/config';
import { startAdminServer } from './admin.js';
import { expandBmcs, SimulatorConfig } from './config.js';
import { startNvosSimulator } from './nvos/simulator.js';
import { loadCa } from './pki.js';
import { startRedfishSimulator } from './redfish/server.js';

exitOnHelp(
  serviceUsage(
    'simulator',
    'Simulated Redfish BMCs and NVOS switches on loopback addresses, with an admin API.',
    'deploy/config/simulator.example.json',
  ),
);
const config = loadConfig(SimulatorConfig, configPathFromArgs());
const log = createLogger('redfish-simulator', config.log.level);
const bmcs = expandBmcs(config);
/** With bmcTls, where the BMCs' certificates are issued; removed on exit. */
const certDir = config.bmcTls && mkdtempSync(join(tmpdir(), 'fleet-sim-bmc-tls-'));
const sim = await startRedfishSimulator({
  bmcs,
  timeScale: config.timeScale,
  ...(config.timings ? { timings: config.timings } : {}),
  ...(config.bmcTls && certDir
    ? { tls: { ca: loadCa(config.bmcTls.caCertFile, config.bmcTls.caKeyFile), dir: certDir } }
    : {}),
});
const nvos = await startNvosSimulator({
  switches: config.switches,
  timeScale: config.timeScale,
  ...(config.nvosTimings ? { timings: config.nvosTimings } : {}),
});
const admin = await startAdminServer(
  sim,
  bmcs.map((b) => b.id),
  config.admin.host,
  config.admin.port,
  nvos,
);

handleShutdown({
  name: 'redfish simulator',
  log,
  graceS: 5,
  drain: async () => {
    await admin.close();
    await nvos.close();
    await sim.close();
    if (certDir) rmSync(certDir, { recursive: true, force: true });
  },
});
// Logged once a signal would stop it cleanly: the dev stack and tests start sending signals from here.
log.info(
  {
    bmcs: bmcs.length,
    bmcTls: Boolean(certDir),
    switches: config.switches.length,
    adminPort: admin.port,
    timeScale: config.timeScale,
  },
  'redfish simulator ready',
);

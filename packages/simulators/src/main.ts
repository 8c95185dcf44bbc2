import { configPathFromArgs, createLogger, loadConfig } from '@fleet/config';
import { startAdminServer } from './admin.js';
import { expandBmcs, SimulatorConfig } from './config.js';
import { startNvosSimulator } from './nvos/simulator.js';
import { startRedfishSimulator } from './redfish/server.js';

const config = loadConfig(SimulatorConfig, configPathFromArgs());
const log = createLogger('redfish-simulator', config.log.level);
const bmcs = expandBmcs(config);
const sim = await startRedfishSimulator({ bmcs, timeScale: config.timeScale, ...(config.timings ? { timings: config.timings } : {}) });
const nvos = await startNvosSimulator({ switches: config.switches, timeScale: config.timeScale, ...(config.nvosTimings ? { timings: config.nvosTimings } : {}) });
const admin = await startAdminServer(sim, bmcs.map((b) => b.id), config.admin.host, config.admin.port, nvos);
log.info({ bmcs: bmcs.length, switches: config.switches.length, adminPort: admin.port, timeScale: config.timeScale }, 'redfish simulator ready');

const stop = async (signal: string) => {
  log.info({ signal }, 'stopping');
  await admin.close();
  await nvos.close();
  await sim.close();
  process.exit(0);
};
process.once('SIGTERM', () => void stop('SIGTERM'));
process.once('SIGINT', () => void stop('SIGINT'));

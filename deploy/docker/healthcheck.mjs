/* global console, process */
// The images' HEALTHCHECK (Dockerfile): one GET to the process's own HTTP endpoint, found in the config it runs with
// (`--config` in PID 1's command line, else FLEET_CONFIG). hub: GET /healthz on its API port, over HTTPS when it has
// `http.tls` (a probe of itself on loopback: the certificate's name is not checked); workflow agent, NetBox agent and
// satellite: GET /metrics on their metrics port, which answers while the event loop runs; simulator: GET /bmcs on its
// admin API. Exit 0 on a 2xx answer, else 1 with the reason.
//
// Usage: node deploy/docker/healthcheck.mjs hub|workflow-agent|netbox-agent|satellite|simulator [config.json]
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

const [kind, configArg] = process.argv.slice(2);

function configFile() {
  if (configArg) return configArg;
  try {
    const argv = readFileSync('/proc/1/cmdline', 'utf8').split('\0');
    const i = argv.indexOf('--config');
    if (i >= 0 && argv[i + 1]) return argv[i + 1];
  } catch {
    // not a container's PID namespace: FLEET_CONFIG only
  }
  return process.env.FLEET_CONFIG;
}

/** A wildcard listen address is reached on loopback. */
const reachable = (host) => (!host || host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host);

/** Where the process listens: the config section that says so, its host and port. */
const endpoints = {
  hub: { section: 'http', path: '/healthz' },
  'workflow-agent': { section: 'metrics', path: '/metrics' },
  'netbox-agent': { section: 'metrics', path: '/metrics' },
  satellite: { section: 'metrics', path: '/metrics' },
  simulator: { section: 'admin', path: '/bmcs' },
};

function target(config, file) {
  const endpoint = endpoints[kind];
  if (!endpoint) throw new Error(`unknown process ${kind}: ${Object.keys(endpoints).join(', ')}`);
  const listen = config[endpoint.section];
  if (typeof listen?.port !== 'number') throw new Error(`${file} has no ${endpoint.section}.port`);
  return { tls: Boolean(listen.tls), host: reachable(listen.host), port: listen.port, path: endpoint.path };
}

function get({ tls, host, port, path }) {
  const request = tls ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request({ host, port, path, timeout: 5000, ...(tls ? { rejectUnauthorized: false } : {}) }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.once('timeout', () => req.destroy(new Error('no answer within 5 s')));
    req.once('error', reject);
    req.end();
  });
}

try {
  const file = configFile();
  if (!file) throw new Error('no config: pass --config to the process or set FLEET_CONFIG');
  const to = target(JSON.parse(readFileSync(file, 'utf8')), file);
  const status = await get(to);
  const url = `${to.tls ? 'https' : 'http'}://${to.host}:${to.port}${to.path}`;
  if (status < 200 || status >= 300) throw new Error(`${url} answered ${status}`);
} catch (err) {
  console.error(`unhealthy: ${err.message}`);
  process.exit(1);
}

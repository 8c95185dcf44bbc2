import { Endpoint } from './listener.js';
import { nvueServer } from './nvue-server.js';
import { sshServer } from './ssh-server.js';
import { defaultNvosTimings, SimulatedSwitch, type NvosTimings, type SwitchSpec } from './switch.js';

export interface NvosSimulatorOptions {
  switches: SwitchSpec[];
  /** Multiplies every simulated delay: 0.001 turns a 120 s reboot into 0.12 s. */
  timeScale?: number;
  timings?: Partial<NvosTimings>;
}

export interface NvosSimulator {
  switch(id: string): SimulatedSwitch;
  /** http(s)://address:port of the switch's NVUE API (without the /nvue_v1 base path). */
  nvueUrl(id: string): string;
  ssh(id: string): { host: string; port: number };
  /** Every switch id, in configuration order. */
  ids(): string[];
  close(): Promise<void>;
}

interface Running {
  sw: SimulatedSwitch;
  nvue: Endpoint;
  ssh: Endpoint;
}

/**
 * NVLink switches running NVOS: per switch an NVUE REST server and an SSH/SFTP server on
 * its own loopback address, sharing one SimulatedSwitch. Reboots and the nvueUnavailable
 * fault close the ports, so clients see connections refused.
 */
export async function startNvosSimulator(opts: NvosSimulatorOptions): Promise<NvosSimulator> {
  const timings = { ...defaultNvosTimings, ...opts.timings };
  const running = new Map<string, Running>();
  const close = async () => {
    for (const r of running.values()) {
      r.sw.onChange = undefined;
      r.sw.stop();
    }
    await Promise.all([...running.values()].flatMap((r) => [r.nvue.set(false), r.ssh.set(false)]));
  };
  try {
    for (const spec of opts.switches) {
      if (!/^127\./.test(spec.address)) throw new Error(`switch ${spec.id}: ${spec.address} is not a loopback address`);
      if (running.has(spec.id)) throw new Error(`switch ${spec.id} is configured twice`);
      const sw = new SimulatedSwitch(spec, timings, opts.timeScale ?? 1);
      const api = nvueServer(sw);
      const r: Running = {
        sw,
        nvue: new Endpoint(spec.address, spec.nvuePort, api.accept),
        ssh: new Endpoint(spec.address, spec.sshPort, sshServer(sw).accept),
      };
      running.set(spec.id, r);
      // A port that cannot be re-opened after a reboot leaves the switch unreachable, which is what a test would see.
      sw.onChange = () => {
        // NVUE restarts its web server on a TLS change: open connections drop and reconnect under the new settings.
        if (api.refreshTls()) r.nvue.dropConnections();
        r.nvue.set(sw.nvueUp).catch(() => undefined);
        r.ssh.set(sw.sshUp).catch(() => undefined);
      };
      await Promise.all([r.nvue.set(true), r.ssh.set(true)]);
    }
  } catch (err) {
    await close();
    throw err;
  }

  const get = (id: string) => {
    const r = running.get(id);
    if (!r) throw new Error(`no simulated switch ${id}`);
    return r;
  };
  return {
    switch: (id) => get(id).sw,
    nvueUrl: (id) => {
      const { sw, nvue } = get(id);
      return `${sw.spec.tls ? 'https' : 'http'}://${sw.spec.address}:${nvue.port}`;
    },
    ssh: (id) => ({ host: get(id).sw.spec.address, port: get(id).ssh.port }),
    ids: () => [...running.keys()],
    close,
  };
}

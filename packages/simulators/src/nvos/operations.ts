import { createPrivateKey, X509Certificate } from 'node:crypto';
import { finish, isRunning, type Action } from './actions.js';
import type { FirmwareComponent, SimulatedSwitch } from './switch.js';
import { HEAD_BYTES } from './vfs.js';

/**
 * The long-running NVUE actions of a switch. Each returns its action at once and runs on
 * timers scaled by timeScale; failures end the action `action_failed` with a detail, as NVOS does.
 */

const INSTALL_STEPS = 5;
const IMAGE_DIR = '/host/nos-images';
const FIRMWARE_DIR = '/host/fw-images';
const INSTALLING = 'Installing image';

/**
 * Exactly one X.Y.Z in the name, the rule RMS uses to predict the build id
 * (docs/reference/rms-behaviours.md#nvos-image-names).
 */
export function buildIdOf(file: string): string | undefined {
  const found = file.match(/\d+\.\d+\.\d+/g);
  return found?.length === 1 ? found[0] : undefined;
}

/**
 * Platform firmware carries its version in the file name: exactly one dotted number of three
 * or four parts, e.g. `nvfw-bmc-88.0002.1400.fwpkg`. (Real packages carry it in a PLDM header;
 * the simulator does not parse switch packages.)
 */
export function firmwareVersionOf(file: string): string | undefined {
  const found = file.match(/(?<!\d\.?)\d+(?:\.\d+){2,3}(?!\.?\d)/g);
  return found?.length === 1 ? found[0] : undefined;
}

function compareVersions(a: string, b: string): number {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Runs `steps` equal steps over `seconds`; `step(n)` returns false when it ended the action itself. */
function runSteps(
  sw: SimulatedSwitch,
  action: Action,
  seconds: number,
  steps: number,
  step: (n: number) => boolean,
  done: () => void,
): void {
  let n = 0;
  const tick = () => {
    action.state = 'action_running';
    if (++n >= steps) return done();
    if (!step(n)) return;
    action.timer = setTimeout(tick, sw.ms(seconds) / steps);
    action.timer.unref();
  };
  action.timer = setTimeout(tick, sw.ms(seconds) / steps);
  action.timer.unref();
}

function failed(action: Action, detail: string): Action {
  finish(action, 'action_failed', detail);
  return action;
}

/** `@install` of an NVOS image: steps, then the reboot handoff, then the new build runs. */
export function installImage(sw: SimulatedSwitch, file: string): Action {
  const action = sw.actions.create(INSTALLING);
  if (!sw.fs.file(`${IMAGE_DIR}/${file}`)) return failed(action, `image file ${file} not found in ${IMAGE_DIR}`);
  const build = buildIdOf(file);
  if (!build) return failed(action, `cannot tell the build id of ${file}: it must contain exactly one X.Y.Z`);
  if (sw.actions.all().some((a) => a !== action && a.status === INSTALLING && isRunning(a)))
    return failed(action, 'another image install is in progress');
  sw.counters.installsStarted++;
  runSteps(
    sw,
    action,
    sw.timings.installS,
    INSTALL_STEPS,
    (n) => {
      action.percentage = (n * 100) / INSTALL_STEPS;
      if (n === 3 && sw.faults.installFailure) {
        finish(action, 'action_failed', `image install failed: ${file} did not verify`);
        return false;
      }
      // Half-way: the reboot ends the action (action_failed) and leaves the old image running.
      if (n === 3 && sw.faults.rebootDuringInstall) {
        sw.reboot();
        return false;
      }
      return true;
    },
    () => {
      sw.stageImage(build);
      // NVOS loses the action's connection as it reboots into the new image: action_error at 100%
      // (docs/reference/rms-behaviours.md#nvue-actions).
      const end = sw.spec.installEndState ?? 'action_error';
      finish(
        action,
        end,
        end === 'action_error'
          ? 'disconnecting from nvos: system is offline during reboot'
          : `installed ${build}; rebooting`,
        100,
      );
      sw.rebootSoon();
    },
  );
  return action;
}

/** `@install` of a platform firmware component from /host/fw-images (or its component folder, as nvfwupd stages it). */
export function installFirmware(
  sw: SimulatedSwitch,
  component: FirmwareComponent,
  file: string,
  force: boolean,
): Action {
  const action = sw.actions.create(`Installing ${component} firmware`);
  const folder = component === 'cpld1' ? 'cpld' : component;
  if (![`${FIRMWARE_DIR}/${folder}/${file}`, `${FIRMWARE_DIR}/${file}`].some((p) => sw.fs.file(p))) {
    return failed(action, `firmware file ${file} not found in ${FIRMWARE_DIR}`);
  }
  const version = firmwareVersionOf(file);
  if (!version) return failed(action, `cannot tell the firmware version of ${file}`);
  const current = sw.firmware[component].installed;
  if (!force && compareVersions(version, current) < 0)
    return failed(action, `Component comparison stamp is lower: ${version} < ${current}`);
  sw.counters.firmwareInstallsStarted++;
  runSteps(
    sw,
    action,
    sw.timings.firmwareInstallS,
    INSTALL_STEPS,
    (n) => {
      action.percentage = (n * 100) / INSTALL_STEPS;
      if (n === 3 && sw.faults.installFailure) {
        finish(action, 'action_failed', `${component} firmware install failed: flash write error`);
        return false;
      }
      return true;
    },
    () => {
      sw.firmware[component].installed = version;
      finish(action, 'action_success', `installed ${version}; power cycle the system to activate it`, 100);
    },
  );
  return action;
}

/** `@uninstall`: frees the partition not running now. */
export function uninstallImage(sw: SimulatedSwitch): Action {
  const action = sw.actions.create('Uninstalling image');
  runSteps(
    sw,
    action,
    sw.timings.actionS,
    1,
    () => true,
    () => {
      sw.uninstallUnused();
      finish(action, 'action_success', '', 100);
    },
  );
  return action;
}

/** `@fetch`: streams the image at a URL into /host/nos-images, hashing it like an SFTP upload. */
export function fetchImage(sw: SimulatedSwitch, url: string): Action {
  const action = sw.actions.create('Fetching image');
  const name = decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
  if (!/^[A-Za-z0-9_-][A-Za-z0-9._-]*$/.test(name)) return failed(action, `cannot store ${url}: bad file name`);
  action.state = 'action_running';
  void (async () => {
    const res = await fetch(url);
    if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
    const file = sw.fs.openForWrite(`${IMAGE_DIR}/${name}`)!;
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) file.write(file.size, Buffer.from(chunk));
    file.close();
  })().then(
    () => finish(action, 'action_success', `fetched ${name}`, 100),
    (err: unknown) => finish(action, 'action_failed', `fetch of ${url} failed: ${(err as Error).message}`),
  );
  return action;
}

/** `@power-cycle`: done at once; the switch goes down after the handoff delay. */
export function powerCycle(sw: SimulatedSwitch): Action {
  const action = sw.actions.create('Power cycling');
  finish(action, 'action_success', 'system is going down for a power cycle', 100);
  sw.rebootSoon();
  return action;
}

/** `@reset` of factory-default: admin/admin and an empty configuration after the reboot. */
export function factoryReset(sw: SimulatedSwitch): Action {
  const action = sw.actions.create('Resetting to factory defaults');
  finish(action, 'action_success', 'system is going down for a factory reset', 100);
  sw.rebootSoon({ factoryReset: true });
  return action;
}

export type CaSource = { uri: string } | { data: string };
export type EntitySource = { 'uri-public-key': string; 'uri-private-key': string } | { data: string };

/*
 * `@import` into the switch's certificate store. Material comes inline (`data`, one PEM with
 * certificate and key for an entity) or from files staged over SFTP (`file://` URIs), which is
 * how RMS installs switch mTLS material.
 */

export function importCaCertificate(sw: SimulatedSwitch, id: string, source: CaSource): Action {
  return runImport(sw, `Importing CA certificate ${id}`, id, () => {
    const pem = 'data' in source ? source.data : readStaged(sw, source.uri);
    sw.caCertificates.set(id, { pem, validTo: new Date(new X509Certificate(pem).validTo).toISOString() });
  });
}

export function importEntityCertificate(sw: SimulatedSwitch, id: string, source: EntitySource): Action {
  return runImport(sw, `Importing certificate ${id}`, id, () => {
    const [certPem, keyPem] =
      'data' in source
        ? [source.data, source.data]
        : [readStaged(sw, source['uri-public-key']), readStaged(sw, source['uri-private-key'])];
    const cert = new X509Certificate(certPem);
    if (!cert.checkPrivateKey(createPrivateKey(keyPem)))
      throw new Error('the private key does not match the certificate');
    sw.certificates.set(id, { certPem, keyPem, validTo: new Date(cert.validTo).toISOString() });
  });
}

function runImport(sw: SimulatedSwitch, status: string, id: string, work: () => void): Action {
  const action = sw.actions.create(status);
  runSteps(
    sw,
    action,
    sw.timings.actionS,
    1,
    () => true,
    () => {
      try {
        work();
        finish(action, 'action_success', `imported ${id}`, 100);
      } catch (err) {
        finish(action, 'action_failed', `cannot import ${id}: ${(err as Error).message}`);
      }
    },
  );
  return action;
}

/** PEM material staged over SFTP; only small files keep their content in the simulator. */
function readStaged(sw: SimulatedSwitch, uri: string): string {
  if (!uri.startsWith('file:///')) throw new Error(`${uri} is not a file:// URI`);
  const path = uri.slice('file://'.length);
  const file = sw.fs.file(path);
  if (!file) throw new Error(`${path} does not exist`);
  if (file.size > HEAD_BYTES) throw new Error(`${path} is too large for PEM material`);
  return file.head.subarray(0, file.size).toString('utf8');
}

import { DESCRIPTOR_UUID, type FwpkgHeader } from '@fleet/fwpkg';
import type { SimulatedBmc } from './bmc.js';
import { redfishError } from './errors.js';
import { message } from './messages.js';
import type { FirmwareSpec } from './profiles/types.js';
import { end, isRunning, type Task } from './tasks.js';

export interface UpdateParameters {
  targets: string[];
  force: boolean;
}

export interface PlannedComponent {
  spec: FirmwareSpec;
  version: string;
  stamp: number;
}

const ACTION = 'UpdateService.MultipartHttpPushUpdate';
const STEPS = 10;

/**
 * Decides what a pushed package would update on this BMC, the way the PLDM update agent does:
 * device ID records must carry one of this tray's descriptors, and only the components those
 * records list (narrowed by Targets) are taken. Throws a Redfish error reply when nothing applies.
 */
export function planUpdate(
  bmc: SimulatedBmc,
  pkg: FwpkgHeader,
  params: UpdateParameters,
  filename: string,
): PlannedComponent[] {
  const firmware = bmc.profile.firmware;
  const allowed = allowedByTargets(bmc, params.targets);
  const planned = new Map<string, PlannedComponent>();
  for (const device of pkg.devices) {
    const uuids = new Set(device.descriptors.filter((d) => d.type === DESCRIPTOR_UUID).map((d) => d.data));
    for (const index of device.applicableComponents) {
      const component = pkg.components[index]!;
      for (const spec of firmware) {
        if (spec.device === undefined || !uuids.has(spec.device) || spec.componentId !== component.identifier) continue;
        if (allowed && !allowed.has(spec.id)) continue;
        planned.set(spec.id, { spec, version: component.version, stamp: component.comparisonStamp });
      }
    }
  }
  if (planned.size === 0) {
    throw redfishError(400, 'ActionParameterValueError', ['UpdateFile', ACTION], undefined, [
      message('Update', 'UpdateNotApplicable', [filename, bmc.profile.label]),
    ]);
  }
  return [...planned.values()];
}

function allowedByTargets(bmc: SimulatedBmc, targets: string[]): Set<string> | undefined {
  if (targets.length === 0) return undefined;
  const out = new Set<string>();
  for (const target of targets) {
    const normalized = target.replace(/\/+$/, '');
    const group = bmc.profile.targetGroups.get(normalized);
    const id = normalized.startsWith('/redfish/v1/UpdateService/FirmwareInventory/') ? normalized.slice(44) : undefined;
    if (group) group.forEach((g) => out.add(g));
    else if (id && bmc.profile.firmware.some((f) => f.id === id)) out.add(id);
    else throw redfishError(400, 'ActionParameterValueNotInList', [target, 'Targets', ACTION]);
  }
  return out;
}

/** One update at a time per BMC, like the real PLDM update agent. */
export function updateInProgress(bmc: SimulatedBmc): boolean {
  return [...bmc.tasks().byId.values()].some(isRunning);
}

/**
 * Runs the update as a Task in ten steps over `firmwareUpdateS`: New, Running with progress
 * messages, then Completed with the images staged (they run only after a reset) and entered in
 * the BMC's flash log, or Exception for a downgrade without ForceUpdate or an injected failure,
 * or Interrupted by a BMC reboot.
 */
export function startUpdateTask(
  bmc: SimulatedBmc,
  planned: PlannedComponent[],
  params: UpdateParameters,
  filename: string,
): Task {
  const task = bmc.tasks().create('Firmware update task');
  const stepMs = bmc.ms(bmc.timings.firmwareUpdateS) / STEPS;
  let step = 0;

  const tick = () => {
    step++;
    if (step === 1) {
      task.state = 'Running';
      task.messages.push(message('TaskEvent', 'TaskStarted', [task.id]));
      for (const p of planned) task.messages.push(message('Update', 'TargetDetermined', [p.spec.id, filename]));
      const lower = params.force ? undefined : planned.find((p) => p.stamp < bmc.firmware(p.spec).stamp);
      if (lower) {
        end(task, 'Exception', 'Critical', [
          message('ResourceEvent', 'ResourceErrorsDetected', [lower.spec.id, 'Component comparison stamp is lower']),
          message('TaskEvent', 'TaskAborted', [task.id]),
        ]);
        return;
      }
    } else if (step < STEPS) {
      task.percent = step * 10;
      task.messages.push(message('TaskEvent', 'TaskProgressChanged', [task.id, String(task.percent)]));
      if (step === 5 && bmc.faults.taskFailure) {
        end(task, 'Exception', 'Critical', [
          message('Update', 'ApplyFailed', [filename, planned[0]!.spec.id]),
          message('TaskEvent', 'TaskAborted', [task.id]),
        ]);
        return;
      }
      // PMCs and BMCs reboot themselves mid-flash; the running task is lost with them.
      if (step === 6 && bmc.faults.rebootDuringUpdate) {
        bmc.rebootManager();
        return;
      }
    } else {
      task.percent = 100;
      const done = [];
      for (const p of planned) {
        const current = bmc.firmware(p.spec);
        if (!params.force && p.stamp === current.stamp && p.version === current.version) {
          done.push(message('Update', 'UpdateSkippedSameVersion', [p.spec.id, filename]));
          continue;
        }
        bmc.stage({
          id: p.spec.id,
          version: p.version,
          stamp: p.stamp,
          taskId: task.id,
          filename,
          at: new Date().toISOString(),
        });
        done.push(
          message('Update', 'UpdateSuccessful', [p.spec.id, filename]),
          message('Update', 'AwaitToActivate', [filename, p.spec.id]),
        );
      }
      end(task, 'Completed', 'OK', [...done, message('TaskEvent', 'TaskCompletedOK', [task.id])]);
      return;
    }
    task.timer = setTimeout(tick, stepMs);
    task.timer.unref();
  };
  task.timer = setTimeout(tick, stepMs);
  task.timer.unref();
  return task;
}

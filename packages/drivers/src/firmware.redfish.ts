import type { ComponentVersion } from '@fleet/domain';
import {
  getFirmwareInventory,
  listTasks,
  pushFirmware,
  taskResult,
  waitForTask,
  type RedfishTask,
} from '@fleet/redfish';
import type { DriverClients } from './clients.js';
import type { FirmwareOps, FirmwareTaskStatus } from './types.js';

/** Every Redfish node updates the same way: multipart push, Task, FirmwareInventory. */
export function redfishFirmware(clients: DriverClients): FirmwareOps {
  return {
    async inventory(): Promise<ComponentVersion[]> {
      const inv = await getFirmwareInventory(clients.main());
      return inv.components.filter((c) => c.version !== undefined).map((c) => ({ id: c.id, version: c.version! }));
    },
    async push(opts) {
      const { taskUri } = await pushFirmware(clients.main(), {
        filePath: opts.filePath,
        fileName: opts.fileName,
        targets: opts.targets,
        forceUpdate: opts.force,
      });
      return { taskUri };
    },
    async findUpdateTask(fileName) {
      let busy: FirmwareTaskStatus | undefined;
      for (const task of await listTasks(clients.main())) {
        const status = statusOf(task.uri, task);
        if (mentions(task, fileName)) return { ...status, ours: true };
        if (status.state === 'pending') busy ??= { ...status, ours: false };
      }
      return busy;
    },
    async awaitTask(taskUri, opts) {
      return waitForTask(clients.main(), taskUri, {
        pollIntervalMs: opts.pollIntervalMs,
        timeoutMs: opts.timeoutMs,
        ...(opts.signal ? { signal: opts.signal } : {}),
        onProgress: (t) => opts.onProgress?.(t.PercentComplete ?? 0, t.TaskState ?? ''),
      });
    },
  };
}

function statusOf(taskUri: string, task: RedfishTask): Omit<FirmwareTaskStatus, 'ours'> {
  const result = taskResult(taskUri, task);
  return {
    taskUri,
    state: result?.outcome ?? 'pending',
    taskState: task.TaskState ?? null,
    percent: task.PercentComplete ?? null,
    ...(result?.failureReason ? { reason: result.failureReason } : {}),
  };
}

/** Update tasks name the pushed file in their message arguments (TargetDetermined, UpdateSuccessful…). */
function mentions(task: RedfishTask, fileName: string): boolean {
  return (task.Messages ?? []).some((m) => (m.MessageArgs ?? []).some((a) => a === fileName));
}

import type { WorkflowExecutionInfo } from '@temporalio/client';
import { recordDeviceFirmware, setDeviceFirmwareVersions, type DbOrTx, type Job, type JobProjection } from '@fleet/db';
import { jobMemoKey, type ComponentVersion, type JobMemo } from '@fleet/domain';

/** The component id NVOS's build is recorded under; on a switch tray it is also the device's firmware version. */
const NVOS_COMPONENT = 'NVOS';

/** Versions a finished job read off its device: an update's final inventory, a refresh, an NVOS build it verified. */
export interface DeviceVersions {
  deviceId: string;
  jobId: string;
  at: Date;
  components: ComponentVersion[];
}

export function deviceVersionsOf(job: Job, wf: WorkflowExecutionInfo, p: JobProjection): DeviceVersions | undefined {
  if (!job.deviceId || p.state === 'running') return undefined;
  const result = ((wf.memo?.[jobMemoKey] ?? {}) as JobMemo).result;
  const succeeded = p.state === 'succeeded';
  const list =
    job.kind === 'device.firmware_update' || job.kind === 'switch.firmware_update'
      ? result?.['inventory']
      : job.kind === 'device.firmware_refresh' && succeeded
        ? result?.['components']
        : job.kind === 'switch.nvos_install' && succeeded && typeof result?.['to'] === 'string'
          ? [{ id: NVOS_COMPONENT, version: result['to'] }]
          : undefined;
  if (!Array.isArray(list) || list.length === 0) return undefined;
  const components = list.filter(
    (c): c is ComponentVersion => typeof c?.id === 'string' && typeof c?.version === 'string',
  );
  return { deviceId: job.deviceId, jobId: job.id, at: p.finishedAt ?? new Date(), components };
}

/**
 * Writes a page of finished jobs' versions to their devices in two statements: every component into
 * device_firmware, and a verified NVOS build into the device row's firmware_version (GET /v1/devices/{id}).
 */
export async function applyDeviceVersions(db: DbOrTx, readings: DeviceVersions[]): Promise<void> {
  await recordDeviceFirmware(db, readings);
  await setDeviceFirmwareVersions(
    db,
    readings.flatMap((r) =>
      r.components
        .filter((c) => c.id === NVOS_COMPONENT)
        .map((c) => ({ deviceId: r.deviceId, version: c.version, at: r.at })),
    ),
  );
}

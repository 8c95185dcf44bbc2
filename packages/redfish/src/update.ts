import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import type { RedfishClient } from './client.js';
import { RedfishError } from './errors.js';
import { getUpdateService, updateServiceKey } from './firmware.js';
import { multipartFirmwareBody } from './multipart.js';
import { taskUriFrom } from './tasks.js';

export interface PushFirmwareOptions {
  filePath: string;
  /** Component URIs (e.g. /redfish/v1/Chassis/HGX_Chassis_0); empty or absent = the whole package. */
  targets?: string[];
  /** Needed to downgrade. */
  forceUpdate?: boolean;
  /** Name sent to the BMC; defaults to the file's base name. */
  fileName?: string;
}

export interface PushFirmwareResult {
  /** The task to pass to waitForTask. */
  taskUri: string;
  status: number;
}

/**
 * Multipart firmware push to the UpdateService's MultipartHttpPushUri, streamed from
 * disk. The upload is a non-idempotent POST: it is resent only when the BMC certainly
 * did not take it (no connection, or 503; or a 404 from a push URI kept from an earlier
 * read, which is discovered again first); after a reset or timeout mid-upload the
 * error is returned, and the caller checks the task list or installed version before
 * pushing again.
 */
export async function pushFirmware(client: RedfishClient, opts: PushFirmwareOptions): Promise<PushFirmwareResult> {
  return pushTo(client, opts, client.isCached(updateServiceKey));
}

/**
 * `kept`: the UpdateService comes from what discovery kept, so what it says may predate a reset the client did not see.
 * What it makes this push fail on (a push URI not found, an image over its size limit) is then read again, once.
 */
async function pushTo(client: RedfishClient, opts: PushFirmwareOptions, kept: boolean): Promise<PushFirmwareResult> {
  const service = await getUpdateService(client);
  const again = () => {
    client.invalidate();
    return pushTo(client, opts, false);
  };
  const pushUri = service.multipartHttpPushUri;
  if (!pushUri)
    throw new RedfishError('FailedPrecondition', client.bmc, service.uri, 'UpdateService has no MultipartHttpPushUri');
  let size: number;
  try {
    const st = await stat(opts.filePath);
    if (!st.isFile()) throw new Error('not a regular file');
    size = st.size;
  } catch (err) {
    throw new RedfishError(
      'InvalidArgument',
      client.bmc,
      pushUri,
      `firmware file ${opts.filePath}: ${(err as Error).message}`,
    );
  }
  if (service.maxImageSizeBytes !== undefined && size > service.maxImageSizeBytes) {
    if (kept) return again();
    throw new RedfishError(
      'InvalidArgument',
      client.bmc,
      pushUri,
      `image is ${size} bytes, the BMC accepts at most ${service.maxImageSizeBytes}`,
    );
  }
  const body = multipartFirmwareBody(
    { Targets: opts.targets ?? [], ForceUpdate: opts.forceUpdate ?? false },
    { path: opts.filePath, size, name: opts.fileName ?? basename(opts.filePath) },
  );
  let res;
  try {
    res = await client.upload(pushUri, body);
  } catch (err) {
    // Not found: the BMC has no such resource and took nothing. Any other answer stands (a 503 was already resent as
    // often as the client resends).
    if (kept && err instanceof RedfishError && err.status === 404) return again();
    throw err;
  }
  const taskUri = taskUriFrom(res);
  if (!taskUri)
    throw new RedfishError('Protocol', client.bmc, pushUri, 'no task in the UpdateService multipart response');
  return { taskUri, status: res.status };
}

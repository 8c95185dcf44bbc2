import type { IncomingMessage } from 'node:http';
import { FwpkgError, parseFwpkgHeader } from '@fleet/fwpkg';
import type { SimulatedBmc } from '../bmc.js';
import { redfishError } from '../errors.js';
import { planUpdate, startUpdateTask, updateInProgress } from '../firmware-update.js';
import { resetConnection } from '../connection.js';
import { drain, isObject, type Reply } from '../http-util.js';
import { message } from '../messages.js';
import { boundaryOf, MultipartError, readMultipart } from '../multipart.js';
import { taskBody } from '../tasks.js';

const ACTION = 'UpdateService.MultipartHttpPushUpdate';
/** Holds any PLDM header (PackageHeaderSize is 16 bits); the rest of the image is counted, not kept. */
const KEEP_HEADER_BYTES = 64 * 1024;

export interface UploadSummary {
  UpdateParameters?: unknown;
  UpdateFile?: { filename: string; size: number };
}

/**
 * POST to MultipartHttpPushUri (DSP0266 §11.4.2): `UpdateParameters` JSON with Targets and
 * ForceUpdate, plus `UpdateFile`. Answers 202 with the Task that runs the update.
 */
export async function multipartPush(bmc: SimulatedBmc, req: IncomingMessage, summary: UploadSummary): Promise<Reply> {
  const boundary = boundaryOf(req.headers['content-type']);
  if (!boundary) {
    await drain(req);
    throw redfishError(400, 'MissingOrMalformedPart');
  }
  if (bmc.faults.rebootDuringUpload) return rebootMidUpload(bmc, req);
  let parts;
  try {
    parts = await readMultipart(req, boundary, {
      keepFileBytes: KEEP_HEADER_BYTES,
      maxFieldBytes: 64 * 1024,
      maxTotalBytes: bmc.profile.maxImageBytes + 1024 * 1024,
    });
  } catch (err) {
    if (!(err instanceof MultipartError)) throw err;
    req.resume();
    throw err.tooLarge ? redfishError(413, 'PayloadTooLarge') : redfishError(400, 'MissingOrMalformedPart');
  }
  const rawParams = parts.fields.get('UpdateParameters');
  const file = parts.files.get('UpdateFile');
  let params: unknown;
  try {
    params = rawParams === undefined ? undefined : JSON.parse(rawParams);
  } catch {
    throw redfishError(400, 'MalformedJSON');
  }
  summary.UpdateParameters = params;
  if (file) summary.UpdateFile = { filename: file.filename, size: file.size };
  if (!isObject(params) || !file) throw redfishError(400, 'MissingOrMalformedPart');

  const targets = params['Targets'] ?? [];
  const force = params['ForceUpdate'] ?? false;
  if (!Array.isArray(targets) || !targets.every((t) => typeof t === 'string'))
    throw redfishError(400, 'ActionParameterValueTypeError', [JSON.stringify(targets), 'Targets', ACTION]);
  if (typeof force !== 'boolean')
    throw redfishError(400, 'ActionParameterValueTypeError', [JSON.stringify(force), 'ForceUpdate', ACTION]);
  if (updateInProgress(bmc)) throw redfishError(503, 'ServiceTemporarilyUnavailable', ['30'], { 'Retry-After': '30' });

  let pkg;
  try {
    pkg = parseFwpkgHeader(file.head);
  } catch (err) {
    if (!(err instanceof FwpkgError)) throw err;
    throw redfishError(400, 'ActionParameterValueError', ['UpdateFile', ACTION], undefined, [
      message('Update', 'VerificationFailed', [file.filename, bmc.profile.label]),
    ]);
  }
  const update = { targets, force };
  const planned = planUpdate(bmc, pkg, update, file.filename);
  const task = startUpdateTask(bmc, planned, update, file.filename);
  const location = `/redfish/v1/TaskService/Tasks/${task.id}`;
  return { status: 202, body: taskBody(task), headers: { Location: location } };
}

/** Takes half the upload, then the BMC restarts: the connection drops, no task is created. */
async function rebootMidUpload(bmc: SimulatedBmc, req: IncomingMessage): Promise<Reply> {
  const half = Number(req.headers['content-length'] ?? 0) / 2;
  await new Promise<void>((resolve) => {
    let received = 0;
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received < half) return;
      req.off('data', onData);
      req.pause();
      resolve();
    };
    req.on('data', onData);
    req.once('end', resolve);
    req.once('close', resolve);
  });
  const { rebootDuringUpload: _once, ...rest } = bmc.faults;
  bmc.setFaults(rest);
  bmc.rebootManager();
  resetConnection(req.socket);
  return { status: 0 };
}

import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { json, readBody, serve, type TestServer } from './servers.js';

/** What an upload delivered, as measured by the fake while streaming it (never buffered). */
export interface ReceivedUpload {
  contentLength: number;
  parameters: unknown;
  fileName: string | undefined;
  fileBytes: number;
  sha256: string;
}

export interface FakeBmcState {
  powerState: string;
  /** Change it to re-enumerate the system under a new URI (stale links answer 404). */
  systemId: string;
  /** Where multipart pushes go; change it to move the push URI (the old one answers 404). */
  pushPath: string;
  /** The UpdateService's MaxImageSizeBytes. */
  maxImageSizeBytes: number;
  resets: { path: string; body: unknown }[];
  /** Live sessions by token, with their resource id. */
  sessions: Map<string, string>;
  maxSessions: number;
  sessionsCreated: number;
  peakSessions: number;
  managerEtag: number;
  managerTimeZone: string;
  uploads: ReceivedUpload[];
  /** A slow BMC: the pause after each chunk of an upload it reads, so the client's socket writes back up. */
  uploadReadDelayMs?: number;
  /** TaskState sequence served by successive GETs of the task; the last one repeats. */
  taskStates: { TaskState: string; TaskStatus?: string; PercentComplete?: number; Messages?: unknown[] }[];
  /** Runs first; return true when it answered the request itself (fault injection). */
  intercept?: (req: IncomingMessage, res: ServerResponse, path: string) => boolean | Promise<boolean>;
}

export interface FakeBmc extends TestServer {
  state: FakeBmcState;
}

const v1 = '/redfish/v1';
const link = (id: string) => ({ '@odata.id': id });

/** A small dynamic BMC shaped after NVIDIA trays: System_0, BMC_0/HGX_BMC_0, sessions, multipart update, tasks. */
export async function fakeBmc(
  credentials: { username: string; password: string },
  tls?: { key: string; cert: string },
): Promise<FakeBmc> {
  const state: FakeBmcState = {
    powerState: 'Off',
    systemId: 'System_0',
    pushPath: '/redfish/v1/UpdateService/update-multipart',
    maxImageSizeBytes: 512 * 1024 * 1024,
    resets: [],
    sessions: new Map(),
    maxSessions: 2,
    sessionsCreated: 0,
    peakSessions: 0,
    managerEtag: 1,
    managerTimeZone: 'UTC',
    uploads: [],
    taskStates: [
      { TaskState: 'Running', PercentComplete: 10 },
      { TaskState: 'Completed', TaskStatus: 'OK', PercentComplete: 100 },
    ],
  };
  let taskReads = 0;
  const basic = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
  const authorised = (req: IncomingMessage) =>
    req.headers.authorization === basic || state.sessions.has(String(req.headers['x-auth-token'] ?? ''));

  const server = await serve(async (req, res, rawPath) => {
    if (state.intercept && (await state.intercept(req, res, rawPath))) return;
    const path = rawPath.replace(/\/$/, '');
    const method = req.method ?? 'GET';
    if (method === 'GET' && path === v1) {
      return json(res, 200, {
        '@odata.id': v1,
        '@odata.type': '#ServiceRoot.v1_15_0.ServiceRoot',
        Systems: link(`${v1}/Systems`),
        Managers: link(`${v1}/Managers`),
        UpdateService: link(`${v1}/UpdateService`),
        SessionService: link(`${v1}/SessionService`),
        Tasks: link(`${v1}/TaskService`),
        Links: { Sessions: link(`${v1}/SessionService/Sessions`) },
      });
    }
    if (method === 'POST' && path === `${v1}/SessionService/Sessions`) {
      const body = JSON.parse(await readBody(req)) as { UserName?: string; Password?: string };
      if (body.UserName !== credentials.username || body.Password !== credentials.password)
        return json(res, 401, { error: { message: 'bad credentials' } });
      if (state.sessions.size >= state.maxSessions)
        return json(res, 503, { error: { message: 'maximum number of user sessions is reached' } });
      const id = `s${++state.sessionsCreated}`;
      const token = `tok-${id}-${Math.random().toString(36).slice(2)}`;
      state.sessions.set(token, id);
      state.peakSessions = Math.max(state.peakSessions, state.sessions.size);
      return json(
        res,
        201,
        { '@odata.id': `${v1}/SessionService/Sessions/${id}`, Id: id },
        {
          'x-auth-token': token,
          location: `${v1}/SessionService/Sessions/${id}`,
        },
      );
    }
    if (!authorised(req)) return json(res, 401, { error: { message: 'authentication required' } });

    const sessionMatch = /^\/redfish\/v1\/SessionService\/Sessions\/([^/]+)$/.exec(path);
    if (method === 'DELETE' && sessionMatch) {
      for (const [token, id] of state.sessions) if (id === sessionMatch[1]) state.sessions.delete(token);
      res.writeHead(204).end();
      return;
    }
    const sys = `${v1}/Systems/${state.systemId}`;
    if (method === 'GET' && path === `${v1}/Systems`)
      return json(res, 200, { 'Members@odata.count': 1, Members: [link(sys)] });
    if (method === 'GET' && path === sys) {
      return json(res, 200, {
        '@odata.id': sys,
        Id: state.systemId,
        PowerState: state.powerState,
        Processors: link(`${sys}/Processors`),
        Actions: {
          '#ComputerSystem.Reset': {
            target: `${sys}/Actions/ComputerSystem.Reset`,
            'ResetType@Redfish.AllowableValues': ['On', 'ForceOff', 'GracefulShutdown', 'PowerCycle'],
          },
        },
      });
    }
    if (method === 'POST' && path === `${sys}/Actions/ComputerSystem.Reset`) {
      const body = JSON.parse(await readBody(req)) as { ResetType: string };
      state.resets.push({ path, body });
      state.powerState = body.ResetType === 'On' ? 'On' : 'Off';
      res.writeHead(204).end();
      return;
    }
    if (method === 'GET' && path === `${sys}/Processors`)
      return json(res, 200, { Members: [link(`${sys}/Processors/CPU_0`), link(`${sys}/Processors/GPU_0`)] });
    if (method === 'GET' && path === `${sys}/Processors/CPU_0`)
      return json(res, 200, { Id: 'CPU_0', ProcessorType: 'CPU' });
    if (method === 'GET' && path === `${sys}/Processors/GPU_0`) {
      return json(res, 200, {
        Id: 'GPU_0',
        Oem: {
          Nvidia: {
            MNNVLinkTopology: {
              ChassisSerialNumber: 'RACK-SN-42',
              TraySlotNumber: 7,
              TraySlotIndex: 3,
              SystemGUID: 'abc',
            },
          },
        },
      });
    }
    if (method === 'GET' && path === `${v1}/Managers`)
      return json(res, 200, { Members: [link(`${v1}/Managers/BMC_0`), link(`${v1}/Managers/HGX_BMC_0`)] });
    const mgr = /^\/redfish\/v1\/Managers\/(BMC_0|HGX_BMC_0)$/.exec(path);
    if (method === 'GET' && mgr) {
      const etag = `W/"${state.managerEtag}"`;
      return json(
        res,
        200,
        {
          '@odata.id': path,
          '@odata.etag': etag,
          Id: mgr[1],
          DateTimeLocalOffset: state.managerTimeZone,
          Actions: {
            '#Manager.Reset': {
              target: `${path}/Actions/Manager.Reset`,
              '@Redfish.ActionInfo': `${path}/ResetActionInfo`,
            },
          },
        },
        { etag },
      );
    }
    if (method === 'GET' && /^\/redfish\/v1\/Managers\/[^/]+\/ResetActionInfo$/.test(path)) {
      return json(res, 200, {
        Parameters: [{ Name: 'ResetType', AllowableValues: ['GracefulRestart', 'ForceRestart'] }],
      });
    }
    if (method === 'POST' && /^\/redfish\/v1\/Managers\/[^/]+\/Actions\/Manager.Reset$/.test(path)) {
      state.resets.push({ path, body: JSON.parse(await readBody(req)) });
      res.writeHead(204).end();
      return;
    }
    if (method === 'PATCH' && path === `${v1}/Managers/BMC_0`) {
      if (req.headers['if-match'] !== `W/"${state.managerEtag}"`)
        return json(res, 412, { error: { message: 'ETag mismatch' } });
      const body = JSON.parse(await readBody(req)) as { DateTimeLocalOffset?: string };
      if (body.DateTimeLocalOffset) state.managerTimeZone = body.DateTimeLocalOffset;
      state.managerEtag++;
      return json(res, 200, { DateTimeLocalOffset: state.managerTimeZone });
    }
    if (method === 'GET' && path === `${v1}/UpdateService`) {
      return json(res, 200, {
        '@odata.type': '#UpdateService.v1_8_0.UpdateService',
        MultipartHttpPushUri: state.pushPath,
        MaxImageSizeBytes: state.maxImageSizeBytes,
        FirmwareInventory: link(`${v1}/UpdateService/FirmwareInventory`),
      });
    }
    if (method === 'GET' && path === `${v1}/TaskService`)
      return json(res, 200, { Tasks: link(`${v1}/TaskService/Tasks`) });
    if (method === 'GET' && path === `${v1}/TaskService/Tasks`) {
      const Members = state.uploads.length ? [link(`${v1}/TaskService/Tasks/1`)] : [];
      return json(res, 200, { Members, 'Members@odata.count': Members.length });
    }
    if (method === 'POST' && path === state.pushPath) {
      state.uploads.push(await receiveMultipart(req, state.uploadReadDelayMs));
      taskReads = 0;
      return json(
        res,
        202,
        { '@odata.id': `${v1}/TaskService/Tasks/1`, Id: '1', TaskState: 'New' },
        { location: `${v1}/TaskService/Tasks/1/Monitor` },
      );
    }
    if (method === 'GET' && path === `${v1}/TaskService/Tasks/1`) {
      const s = state.taskStates[Math.min(taskReads++, state.taskStates.length - 1)];
      return json(res, 200, { '@odata.id': path, Id: '1', ...s });
    }
    json(res, 404, { error: { message: `no ${path}` } });
  }, tls);
  return Object.assign(server, { state });
}

/**
 * Reads a multipart body as a stream: parses the small header region, then hashes the
 * file part as it arrives and checks the closing boundary, holding at most one chunk.
 */
async function receiveMultipart(req: IncomingMessage, readDelayMs = 0): Promise<ReceivedUpload> {
  const contentLength = Number(req.headers['content-length']);
  const boundary = /boundary=(.+)$/.exec(String(req.headers['content-type']))?.[1];
  if (!boundary) throw new Error('no boundary');
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const hash = createHash('sha256');
  let head = Buffer.alloc(0);
  let headLength = -1;
  let fileBytes = 0;
  let consumed = 0;
  let tailSeen = Buffer.alloc(0);
  let parameters: unknown;
  let fileName: string | undefined;
  for await (const raw of req) {
    let chunk = raw as Buffer;
    if (headLength < 0) {
      head = Buffer.concat([head, chunk]);
      const text = head.toString('latin1');
      const fileHeader = text.indexOf('name="UpdateFile"');
      const end = fileHeader >= 0 ? text.indexOf('\r\n\r\n', fileHeader) : -1;
      if (end < 0) continue;
      headLength = end + 4;
      const paramsStart = text.indexOf('\r\n\r\n') + 4;
      parameters = JSON.parse(text.slice(paramsStart, text.indexOf(`\r\n--${boundary}`, paramsStart)));
      fileName = /filename="([^"]*)"/.exec(text.slice(fileHeader))?.[1];
      chunk = head.subarray(headLength);
      consumed = headLength;
      head = Buffer.alloc(0);
    }
    const fileEnd = contentLength - tail.length;
    const fileChunk = chunk.subarray(0, Math.max(0, Math.min(chunk.length, fileEnd - consumed)));
    hash.update(fileChunk);
    fileBytes += fileChunk.length;
    tailSeen = Buffer.concat([tailSeen, chunk.subarray(fileChunk.length)]);
    consumed += chunk.length;
    if (readDelayMs > 0) await new Promise((r) => setTimeout(r, readDelayMs));
  }
  if (!tailSeen.equals(tail)) throw new Error('bad closing boundary');
  return { contentLength, parameters, fileName, fileBytes, sha256: hash.digest('hex') };
}

import type { CallOptions, NvueClient } from './client.js';
import { runAction, type ActionResult, type WaitForActionOptions } from './actions.js';
import { assertImageFilename } from './filenames.js';
import { poll, type PollOptions } from './poll.js';

export interface ImageState {
  /** Build id running now. */
  current: string | undefined;
  /** Build id the next boot runs. */
  next: string | undefined;
  partitions: { 1?: string; 2?: string };
  issuStatus?: string;
}

/**
 * `GET /system/image` in either shape NVOS has used (docs/reference/rms-behaviours.md#nvos-image-state,
 * test-peers item 5): `partitionN` as a build-id string or as `{ "build-id": … }`, and current/next naming a
 * partition (`partition1`, `1`) or giving the build id itself.
 */
export function normaliseImage(body: unknown): ImageState {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const buildOf = (v: unknown) =>
    typeof v === 'string'
      ? v
      : typeof v === 'object' && v !== null
        ? str((v as Record<string, unknown>)['build-id'])
        : undefined;
  const partitions: ImageState['partitions'] = {};
  const p1 = buildOf(b['partition1']);
  const p2 = buildOf(b['partition2']);
  if (p1) partitions[1] = p1;
  if (p2) partitions[2] = p2;
  const resolve = (v: unknown) => {
    const s = str(v);
    if (s === 'partition1' || s === '1') return partitions[1];
    if (s === 'partition2' || s === '2') return partitions[2];
    return s;
  };
  const issu = str(b['issu-status']);
  return {
    current: resolve(b['current']),
    next: resolve(b['next']),
    partitions,
    ...(issu ? { issuStatus: issu } : {}),
  };
}

const str = (v: unknown) => (typeof v === 'string' && v.length > 0 ? v : undefined);

export async function getImage(c: NvueClient, opts: CallOptions = {}): Promise<ImageState> {
  return normaliseImage(await c.get('/system/image', opts));
}

/** Names of the images staged in /host/nos-images, from a map keyed by name or a list. */
export async function listImageFiles(c: NvueClient, opts: CallOptions = {}): Promise<string[]> {
  const body = await c.get('/system/image/files', opts);
  if (Array.isArray(body))
    return body
      .map((f: unknown) => (typeof f === 'string' ? f : (f as { name?: unknown } | null)?.name))
      .filter((name): name is string => typeof name === 'string')
      .sort();
  return body && typeof body === 'object' ? Object.keys(body).sort() : [];
}

/** Has the switch download an image into /host/nos-images. */
export function fetchImage(c: NvueClient, remoteUrl: string, opts: WaitForActionOptions = {}): Promise<ActionResult> {
  return runAction(c, '/system/image', { '@fetch': { state: 'start', parameters: { 'remote-url': remoteUrl } } }, opts);
}

/**
 * Installs a staged image. Success is action_success, or action_error at 100%: the switch
 * lost the action as it went down to boot the new image (`rebootHandoff`). Follow with
 * waitForBuild to see it come back running the new build.
 */
export async function installImage(
  c: NvueClient,
  file: string,
  opts: WaitForActionOptions = {},
): Promise<ActionResult> {
  assertImageFilename(file);
  const body = { '@install': { state: 'start', parameters: { force: true, 'image-file': file } } };
  return runAction(c, `/system/image/files/${encodeURIComponent(file)}`, body, { ...opts, installHandoff: true });
}

/** Removes the image of the partition that is not running. */
export function uninstallImage(c: NvueClient, opts: WaitForActionOptions = {}): Promise<ActionResult> {
  return runAction(c, '/system/image', { '@uninstall': { state: 'start', parameters: { force: true } } }, opts);
}

/**
 * Waits until the switch runs `buildId`, riding over the reboot: connection failures and
 * HTTP errors on /system/image only mean "not yet" (docs/reference/rms-behaviours.md#switch-reboots).
 */
export async function waitForBuild(
  c: NvueClient,
  buildId: string,
  opts: PollOptions & { onPoll?: (state: ImageState | undefined) => void } = {},
): Promise<ImageState> {
  let last: ImageState | undefined;
  return poll({
    ...opts,
    client: c,
    uri: c.uri('/system/image'),
    defaultIntervalMs: 15_000,
    defaultTimeoutMs: 1_200_000,
    describe: () => `running ${last?.current ?? 'unknown build'}, not ${buildId},`,
    tolerate: (err) => err.retryable || (err.status ?? 0) >= 500,
    onTolerated: () => opts.onPoll?.(undefined),
    attempt: async () => {
      last = await getImage(c, opts.signal ? { signal: opts.signal } : {});
      opts.onPoll?.(last);
      return last.current === buildId ? last : undefined;
    },
  });
}

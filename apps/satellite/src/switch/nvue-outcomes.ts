import { NvueError, type NvueErrorKind } from '@fleet/nvue';

async function unless<T>(call: Promise<T>, kind: NvueErrorKind): Promise<T | undefined> {
  try {
    return await call;
  } catch (err) {
    if (err instanceof NvueError && err.kind === kind) return undefined;
    throw err;
  }
}

/** The call's answer, or undefined when the switch refuses the login (HTTP 401). */
export const unlessRefused = <T>(call: Promise<T>): Promise<T | undefined> => unless(call, 'Unauthenticated');

/** The call's answer, or undefined when the switch has no such resource (HTTP 404). */
export const unlessMissing = <T>(call: Promise<T>): Promise<T | undefined> => unless(call, 'NotFound');

/** The SQLSTATE of the first Postgres error in the cause chain (drizzle wraps pg's), if any. */
function sqlState(err: unknown): string | undefined {
  for (let e: unknown = err, n = 0; e && n < 5; e = (e as { cause?: unknown }).cause, n++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}

/**
 * Whether Postgres refused the rows themselves: a data exception (class 22) or a constraint violation (class 23), which
 * the same rows meet again on every attempt. Anything else (a lost connection, a lock or statement timeout, a
 * serialization failure, a transaction already aborted, a bug) says nothing about the objects and passes.
 */
export function refusesTheRows(err: unknown): boolean {
  return /^2[23]/.test(sqlState(err) ?? '');
}

/**
 * Whether Postgres aborted the transaction for a concurrent writer (a deadlock, a serialization failure): the same
 * writes can succeed when tried again, unlike a refused row or a lost connection.
 */
export function abortedByConflict(err: unknown): boolean {
  const state = sqlState(err);
  return state === '40P01' || state === '40001';
}

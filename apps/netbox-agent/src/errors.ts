/**
 * An error as a log line or an inventory-issue message: every line of every message in the cause chain, and what
 * Postgres says about the row it refused (the key in detail, constraint, table, column, where), so the line names the
 * object that blocks. Never the statement's values: drizzle puts the parameters in its message and in `params`, and
 * the agent's parameters are whole pages of inventory (a credential reference is no secret, but a log is no place for
 * a page); for a NOT NULL or CHECK violation pg's detail is the whole failing row, so it is left out.
 */
export function describeError(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err; e && parts.length < 5; e = (e as { cause?: unknown }).cause) {
    parts.push(describeOne(e));
  }
  return parts.join(': ');
}

function describeOne(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  // drizzle's DrizzleQueryError: "Failed query: <sql>\nparams: <values>". The SQL is worth its first words only.
  if ('params' in e && 'query' in e && typeof e.query === 'string') {
    return `failed query: ${e.query.replace(/\s+/g, ' ').trim().slice(0, 120)}`;
  }
  const pg = e as Error & {
    code?: string;
    detail?: string;
    hint?: string;
    constraint?: string;
    table?: string;
    column?: string;
    where?: string;
  };
  const extra = [
    pg.code && /^[0-9A-Z]{5}$/.test(pg.code) ? `SQLSTATE ${pg.code}` : undefined,
    pg.detail && !listsTheRow(pg) ? pg.detail : undefined,
    pg.hint && `hint: ${pg.hint}`,
    pg.table && `table ${pg.table}`,
    pg.constraint && `constraint ${pg.constraint}`,
    pg.column && `column ${pg.column}`,
    pg.where && `where: ${pg.where}`,
  ].filter((x): x is string => Boolean(x));
  return [e.message, ...extra].join('; ');
}

/** NOT NULL (23502) and CHECK (23514) violations: pg's detail is "Failing row contains (<every column's value>)". */
const listsTheRow = (pg: { code?: string; detail?: string }) =>
  pg.code === '23502' || pg.code === '23514' || /^Failing row contains/.test(pg.detail ?? '');

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

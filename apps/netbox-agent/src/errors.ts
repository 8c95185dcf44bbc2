/**
 * An error as a log line or an inventory-issue message: every line of every message in the cause chain, and what
 * Postgres says about the row it refused (detail, constraint, table, column, where), so the line names the object
 * that blocks. Never the statement's parameters: drizzle puts them in its message and in `params`, and the agent's
 * parameters are whole pages of inventory (a credential reference is no secret, but a log is no place for a page).
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
  const pg = e as Error & { code?: string; detail?: string; hint?: string; constraint?: string; table?: string; column?: string; where?: string };
  const extra = [
    pg.code && /^[0-9A-Z]{5}$/.test(pg.code) ? `SQLSTATE ${pg.code}` : undefined,
    pg.detail,
    pg.hint && `hint: ${pg.hint}`,
    pg.table && `table ${pg.table}`,
    pg.constraint && `constraint ${pg.constraint}`,
    pg.column && `column ${pg.column}`,
    pg.where && `where: ${pg.where}`,
  ].filter((x): x is string => Boolean(x));
  return [e.message, ...extra].join('; ');
}

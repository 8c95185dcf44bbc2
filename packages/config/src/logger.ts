import { pino, type Logger } from 'pino';

/**
 * Structured JSON logs. Any field that could carry a secret is redacted wherever it
 * appears, so a careless log call cannot leak a credential.
 *
 * Written synchronously to stdout. pino's default destination is asynchronous and flushes on exit, retrying a
 * failed write every 100 ms for as long as it fails: with stdout a closed pipe (the process that read it died)
 * that flush spins forever on EPIPE, and the process never exits. A synchronous destination that meets EPIPE
 * stops writing instead.
 */
export function createLogger(
  name: string,
  level: string,
  destination: pino.DestinationStream = pino.destination({ dest: 1, sync: true }),
): Logger {
  return pino(
    {
      name,
      level,
      redact: {
        paths: [
          'password',
          '*.password',
          '*.*.password',
          'authorization',
          '*.authorization',
          'req.headers.authorization',
          'headers.authorization',
          'token',
          '*.token',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
export type { Logger };

/**
 * An error as a log field or a stored message: each message in its chain of causes (drizzle wraps the Postgres error
 * as `cause`) with what Postgres names (SQLSTATE, table, constraint, column). Never a value of the statement: not
 * drizzle's `params: …` (its SQL, placeholders only, on one line and at most 500 characters), not pg's `where` or a
 * `Failing row contains (…)` detail, not the value a data exception quotes (`invalid input syntax for type uuid: "…"`).
 * With `keys`, a unique or foreign-key violation's `Key (…)=(…)` detail and pg's hint are kept: the NetBox agent's
 * inventory issues name the object that blocks a row; stored job messages leave them out.
 */
export function errorText(err: unknown, options: { keys?: boolean } = {}): string {
  const parts: string[] = [];
  for (let e: unknown = err; e && parts.length < 5; e = (e as { cause?: unknown }).cause) {
    parts.push(oneErrorText(e, options.keys ?? false));
  }
  return parts.join(': ');
}

function oneErrorText(e: unknown, keys: boolean): string {
  if (!(e instanceof Error)) return String(e);
  // drizzle's DrizzleQueryError: "Failed query: <sql>\nparams: <values>".
  if ('params' in e && 'query' in e && typeof e.query === 'string')
    return `failed query: ${e.query.replace(/\s+/g, ' ').trim().slice(0, 500)}`;
  const pg = e as Error & Partial<Record<'code' | 'detail' | 'hint' | 'table' | 'constraint' | 'column', unknown>>;
  const sqlstate = typeof pg.code === 'string' && /^[0-9A-Z]{5}$/.test(pg.code) ? pg.code : undefined;
  // Class 22 (data exception) messages end with the value Postgres refused.
  const message = sqlstate?.startsWith('22') ? e.message.replace(/: (?:".*"|0x[0-9a-f ]+)$/s, '') : e.message;
  const named = (label: string, v: unknown) => (typeof v === 'string' && v ? [`${label}${v}`] : []);
  const keyDetail = keys && typeof pg.detail === 'string' && /^Key \(/.test(pg.detail) ? pg.detail : undefined;
  return [
    message,
    ...(sqlstate ? [`SQLSTATE ${sqlstate}`] : []),
    ...named('', keyDetail),
    ...(keys ? named('hint: ', pg.hint) : []),
    ...named('table ', pg.table),
    ...named('constraint ', pg.constraint),
    ...named('column ', pg.column),
  ].join('; ');
}

/** A write Postgres refused because of a constraint; `constraint` names the index or constraint. */
export class ConstraintViolation extends Error {
  constructor(
    readonly constraint: string | undefined,
    readonly table: string | undefined,
    cause: unknown,
  ) {
    super(`${table ?? 'a row'} violates ${constraint ?? 'a constraint'}`, { cause });
    this.name = new.target.name;
  }
}

/** Postgres 23505: a unique index (or key) already holds the value. */
export class UniqueViolation extends ConstraintViolation {}

/** Postgres 23514: a check constraint refused the row. */
export class CheckViolation extends ConstraintViolation {}

interface PgError {
  code?: string;
  constraint?: string;
  table?: string;
}

const violationFor: Record<string, typeof ConstraintViolation> = { '23505': UniqueViolation, '23514': CheckViolation };

/** The Postgres error under `err` (drizzle wraps it as `cause`). */
const pgErrorOf = (err: unknown): PgError | undefined => {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 3; e = (e as { cause?: unknown }).cause, depth++)
    if (typeof (e as PgError).code === 'string') return e as PgError;
  return undefined;
};

/** `err` as a typed violation when Postgres refused a write by a unique index or check constraint; else `err`. */
export function asConstraintViolation(err: unknown): unknown {
  if (err instanceof ConstraintViolation) return err;
  const pg = pgErrorOf(err);
  const Violation = pg?.code ? violationFor[pg.code] : undefined;
  return Violation ? new Violation(pg!.constraint, pg!.table, err) : err;
}

/** Runs a write; its unique and check violations are thrown as UniqueViolation and CheckViolation. */
export async function translatingViolations<T>(write: PromiseLike<T>): Promise<T> {
  try {
    return await write;
  } catch (err) {
    throw asConstraintViolation(err);
  }
}

/** True when `err` is a unique violation (of `constraint`, when given). */
export function isUniqueViolation(err: unknown, constraint?: string): err is UniqueViolation {
  return err instanceof UniqueViolation && (constraint === undefined || err.constraint === constraint);
}

/** The unique indexes whose violations callers tell apart, by their names in the schema. */
export const uniqueIndexes = {
  /** A device registered by hand takes a name its site has not given a live device yet. */
  deviceName: 'devices_registered_site_id_name_unique',
  manifestName: 'firmware_manifests_name_unique',
  tokenName: 'api_tokens_name_unique',
  /** One queued, running or cancelling job per device. */
  activeJobPerDevice: 'jobs_one_active_per_device',
  /** The rack guard: one rack power sequence at a time. */
  activeRackSequence: 'jobs_one_active_rack_sequence',
  /** One job per actor and Idempotency-Key. */
  idempotencyKey: 'jobs_created_by_idempotency_key_unique',
} as const;

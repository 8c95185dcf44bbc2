/**
 * A start that can never be carried out: the dispatcher fails its job with this code and message instead of
 * retrying. Any other error is taken as passing (Temporal or the database away) and retried.
 */
export class PermanentIntentError extends Error {
  constructor(
    readonly code: 'INVALID_ARGUMENT' | 'NOT_FOUND' | 'FAILED_PRECONDITION',
    message: string,
  ) {
    super(message);
    this.name = 'PermanentIntentError';
  }
}

/** What the inventory lacks before Fleet can operate a device, in the words the hub uses for the same check. */
export class MissingInventoryError extends PermanentIntentError {
  /** What is missing, as a job of a campaign names it after the device: "no BMC address in the inventory". */
  readonly reason: string;

  constructor(
    readonly device: string,
    readonly missing: string[],
    purpose?: string,
  ) {
    const reason = `no ${missing.join(', ')} in the inventory${purpose ? ` for ${purpose}` : ''}`;
    super('FAILED_PRECONDITION', `device ${device} has ${reason}`);
    this.name = 'MissingInventoryError';
    this.reason = reason;
  }
}

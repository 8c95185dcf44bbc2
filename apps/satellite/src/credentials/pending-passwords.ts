import { readJsonObject, updateJsonObject } from './json-file.js';

/** A rotation's new password before the secret store holds it, or the mark that it does now. */
export type PendingPassword =
  { state: 'generated'; password: string; owner: string; at: string } | { state: 'stored'; owner: string; at: string };

/**
 * New switch and BMC passwords between generation and storage, on the satellite's own disk only
 * (a JSON file, mode 0600, keyed by credential reference), never in Temporal. A password is
 * written here before it is sent to the switch, so whatever happens next (the apply lost, the
 * worker killed, the secret store unwritable) it can be found again rather than replaced by
 * another one the switch never saw. Once the secret store holds it the entry keeps only who
 * stored it (`owner`: workflow and activity id), so a retry of that same activity knows its
 * rotation is done.
 */
export class PendingPasswords {
  constructor(private readonly file: string) {}

  async get(ref: string): Promise<PendingPassword | undefined> {
    return (await readJsonObject(this.file))[ref] as PendingPassword | undefined;
  }

  generated(ref: string, owner: string, password: string): Promise<void> {
    return this.set(ref, { state: 'generated', password, owner, at: new Date().toISOString() });
  }

  stored(ref: string, owner: string): Promise<void> {
    return this.set(ref, { state: 'stored', owner, at: new Date().toISOString() });
  }

  /** Forgets a rotation that was rolled back: its password is on no device and in no store. */
  discard(ref: string): Promise<void> {
    return updateJsonObject(this.file, (all) => {
      delete all[ref];
    });
  }

  private set(ref: string, entry: PendingPassword): Promise<void> {
    return updateJsonObject(this.file, (all) => {
      all[ref] = entry;
    });
  }
}

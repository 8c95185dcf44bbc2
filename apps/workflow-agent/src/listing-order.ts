/** One visibility listing: its place in the order listings were taken, and when it was taken. */
export interface Listing {
  readonly seq: number;
  readonly at: Date;
}

/**
 * The quick cycles and the sweep run side by side (main.ts), so a sweep page listed before a quick cycle may reach
 * Postgres after it. Writes are made one at a time, and a running workflow's view (progress, a rack's power readings)
 * is written only from a listing taken after the one that last wrote that job, so an older view does not overwrite a
 * newer one. A final view (the workflow ended) is never held back: visibility keeps no version of a running workflow,
 * and the order listings were taken in is not quite the order they read it (a listing of several pages reads its
 * later pages after listings taken since), so an ended workflow's view must not lose to an older running one. Its
 * writing once is the page transaction's job (lockOpenJobs).
 */
export class ListingOrder<T extends { job: { id: string } }> {
  private last = 0;
  /** The listing that last wrote each job. */
  private readonly writtenBy = new Map<string, number>();
  /** Listings taken and not yet ended: only they can still write. */
  private readonly open = new Set<number>();
  private writes: Promise<unknown> = Promise.resolve();

  constructor(private readonly isFinal: (entry: T) => boolean) {}

  begin(): Listing {
    const listing = { seq: ++this.last, at: new Date() };
    this.open.add(listing.seq);
    return listing;
  }

  /** The listing writes no more: what only it could have been overtaken by is forgotten. */
  end(listing: Listing): void {
    this.open.delete(listing.seq);
    let oldest = Infinity;
    for (const seq of this.open) oldest = Math.min(oldest, seq);
    // A job last written by a listing no newer than every open one guards against none of them.
    for (const [id, seq] of this.writtenBy) if (seq <= oldest) this.writtenBy.delete(id);
  }

  /**
   * Runs `write` after every write asked for before it, with the entries of `page` that are final or that no newer
   * listing has written; those count as written by `listing` once it resolves. `held` are the others.
   */
  write<R>(listing: Listing, page: T[], write: (fresh: T[]) => Promise<R>): Promise<{ result: R; held: T[] }> {
    return this.serially(async () => {
      const fresh: T[] = [];
      const held: T[] = [];
      for (const entry of page)
        ((this.writtenBy.get(entry.job.id) ?? 0) < listing.seq || this.isFinal(entry) ? fresh : held).push(entry);
      const result = await write(fresh);
      for (const { job } of fresh) this.writtenBy.set(job.id, Math.max(listing.seq, this.writtenBy.get(job.id) ?? 0));
      return { result, held };
    });
  }

  /** Runs `fn` after every write asked for before it (a write of no listed job, such as the batches' aggregation). */
  serially<R>(fn: () => Promise<R>): Promise<R> {
    const run = this.writes.then(fn);
    this.writes = run.catch(() => undefined);
    return run;
  }

  /** Jobs a newer listing guards (tests). */
  get guarded(): number {
    return this.writtenBy.size;
  }
}

/** One visibility listing: its place in the order listings were taken, and when it was taken. */
export interface Listing {
  readonly seq: number;
  readonly at: Date;
}

/**
 * The quick cycles and the sweep run side by side (main.ts), so a sweep page listed before a quick cycle may reach
 * Postgres after it: written as it comes, its older view would overwrite the newer one (a running job's progress, a
 * rack's power readings). Here every listing takes a number when it is taken, writes are made one at a time, and a job
 * is written only from a listing newer than the one that last wrote it. Jobs in a terminal state need no guard (their
 * state, result and error never change again: applyJobProjections), the rest does.
 */
export class ListingOrder {
  private last = 0;
  /** The listing that last wrote each job. */
  private readonly writtenBy = new Map<string, number>();
  /** Listings taken and not yet ended: only they can still write. */
  private readonly open = new Set<number>();
  private writes: Promise<unknown> = Promise.resolve();

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
   * Runs `write` with the entries of `page` no newer listing has written yet, after every write before it; the
   * entries it was given count as written by `listing` once it resolves.
   */
  write<T extends { job: { id: string } }, R>(
    listing: Listing,
    page: T[],
    write: (fresh: T[]) => Promise<R>,
  ): Promise<R> {
    const run = this.writes.then(async () => {
      const fresh = page.filter(({ job }) => (this.writtenBy.get(job.id) ?? 0) < listing.seq);
      const result = await write(fresh);
      for (const { job } of fresh) this.writtenBy.set(job.id, listing.seq);
      return result;
    });
    this.writes = run.catch(() => undefined);
    return run;
  }

  /** Jobs a newer listing guards (tests). */
  get guarded(): number {
    return this.writtenBy.size;
  }
}

export type RevisionState = 'pending' | 'applying' | 'applied' | 'failed' | 'invalid';

/** A staged config change: a path below /nvue_v1 and the PATCH body. */
export interface ConfigChange {
  path: string;
  body: Record<string, unknown>;
}

export interface RevisionIssue {
  message: string;
  severity: 'error' | 'warning' | 'info';
}

export interface Revision {
  id: string;
  state: RevisionState;
  changes: ConfigChange[];
  issues: RevisionIssue[];
  timer?: NodeJS.Timeout;
}

/** The revisions of one switch: created pending, staged into, then applied once. */
export class RevisionStore {
  private readonly byId = new Map<string, Revision>();
  private seq = 0;

  create(): Revision {
    const revision: Revision = { id: String(++this.seq), state: 'pending', changes: [], issues: [] };
    this.byId.set(revision.id, revision);
    return revision;
  }

  get(id: string): Revision | undefined {
    return this.byId.get(id);
  }

  all(): Revision[] {
    return [...this.byId.values()];
  }

  stop(): void {
    for (const r of this.byId.values()) clearTimeout(r.timer);
  }
}

export function settle(r: Revision, state: 'applied' | 'failed' | 'invalid', issue?: RevisionIssue): void {
  clearTimeout(r.timer);
  delete r.timer;
  r.state = state;
  if (issue) r.issues.push(issue);
}

/** The body of `GET /nvue_v1/revision/{id}`: NVUE keys issues by a zero-padded number. */
export function revisionBody(r: Revision): Record<string, unknown> {
  const issue = Object.fromEntries(r.issues.map((i, n) => [String(n).padStart(5, '0'), i]));
  return { state: r.state, transition: { issue, progress: r.state === 'applying' ? 'Applying config' : '' } };
}

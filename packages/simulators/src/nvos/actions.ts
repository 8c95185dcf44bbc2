/** NVUE action states (docs/reference/rms-behaviours.md#nvue-actions); `start` until the first step runs. */
export type ActionState = 'start' | 'action_running' | 'action_success' | 'action_error' | 'action_failed';

export interface Action {
  id: string;
  state: ActionState;
  status: string;
  detail: string;
  percentage: number;
  issue: string[];
  /** The step timer of a running action; cleared when it ends. */
  timer?: NodeJS.Timeout;
}

const KEEP = 64;

/** The actions of one switch, numbered; the oldest finished ones are forgotten. */
export class ActionStore {
  private readonly byId = new Map<string, Action>();
  private seq = 10;

  create(status: string): Action {
    const action: Action = { id: String(++this.seq), state: 'start', status, detail: '', percentage: 0, issue: [] };
    this.byId.set(action.id, action);
    for (const [id, a] of this.byId) {
      if (this.byId.size <= KEEP) break;
      if (!isRunning(a)) this.byId.delete(id);
    }
    return action;
  }

  get(id: string): Action | undefined {
    return this.byId.get(id);
  }

  all(): Action[] {
    return [...this.byId.values()];
  }

  /** Fails every running action, e.g. because the switch rebooted under it. */
  interruptRunning(detail: string): void {
    for (const a of this.byId.values()) if (isRunning(a)) finish(a, 'action_failed', detail);
  }

  stop(): void {
    for (const a of this.byId.values()) clearTimeout(a.timer);
  }
}

export const isRunning = (a: Action): boolean => a.state === 'start' || a.state === 'action_running';

export function finish(
  a: Action,
  state: 'action_success' | 'action_error' | 'action_failed',
  detail = '',
  percentage = a.percentage,
): void {
  clearTimeout(a.timer);
  delete a.timer;
  a.state = state;
  a.detail = detail;
  a.percentage = percentage;
  if (state === 'action_failed' && detail) a.issue.push(detail);
}

/** The body of `GET /nvue_v1/action/{id}`. */
export function actionBody(a: Action): Record<string, unknown> {
  return {
    state: a.state,
    status: a.status,
    detail: a.detail,
    percentage: a.percentage,
    issue: a.issue,
    'http-status': 200,
  };
}

import type { DeviceOutcome, JobMemo, Stage, StageSpan, StageStatus, StageTimeline } from '@fleet/domain';

/**
 * The latest memo, upserted only on flush() and only when it differs from the last one upserted.
 * Each upsert is a history event (and a billed Action): a workflow that flushes right before it
 * awaits an activity or returns upserts at most once per workflow task.
 */
export class CoalescedMemo<T> {
  private pending: T | undefined;
  private last = '';

  constructor(private readonly upsert: (memo: T) => void) {}

  set(memo: T): void {
    this.pending = memo;
  }

  flush(): void {
    if (this.pending === undefined) return;
    const json = JSON.stringify(this.pending);
    if (json !== this.last) this.upsert(this.pending);
    this.last = json;
    this.pending = undefined;
  }
}

/**
 * A staged job's timeline and per-device outcomes, published through the workflow
 * memo at every transition (the agent projects it into the job while it runs).
 * Times come from the workflow clock, so replay produces the same values.
 */
export class StageRecorder {
  private readonly stages: Stage[];
  private current: string | null = null;
  readonly devices: Record<string, DeviceOutcome> = {};

  constructor(
    names: readonly string[],
    deviceIds: readonly string[],
    private readonly publish: (memo: JobMemo) => void,
  ) {
    this.stages = names.map((name) => ({ name, status: 'queued' as StageStatus }));
    for (const id of deviceIds) this.devices[id] = { state: 'queued' };
  }

  get timeline(): StageTimeline {
    return { currentStage: this.current, stages: this.stages.map((s) => ({ ...s })) };
  }

  private stage(name: string): Stage {
    const s = this.stages.find((x) => x.name === name);
    if (!s) throw new Error(`unknown stage ${name}`);
    return s;
  }

  start(name: string, message?: string): void {
    const s = this.stage(name);
    s.status = 'running';
    s.startedAt = new Date().toISOString();
    if (message) s.message = message;
    this.current = name;
    this.emit();
  }

  finish(name: string, status: Exclude<StageStatus, 'queued' | 'running'>, message?: string): void {
    const s = this.stage(name);
    const now = new Date();
    s.status = status;
    s.startedAt ??= now.toISOString();
    s.finishedAt = now.toISOString();
    s.durationS = (now.getTime() - Date.parse(s.startedAt)) / 1000;
    if (message) s.message = message;
    this.emit();
  }

  /** A stage that ran elsewhere (inside an activity) with the times it reported, or one that did not run. */
  record(name: string, status: Exclude<StageStatus, 'queued' | 'running'>, span?: StageSpan, message?: string): void {
    const s = this.stage(name);
    s.status = status;
    if (span) {
      s.startedAt = span.startedAt;
      s.finishedAt = span.finishedAt;
      s.durationS = (Date.parse(span.finishedAt) - Date.parse(span.startedAt)) / 1000;
    }
    if (message) s.message = message;
    this.current = name;
    this.emit();
  }

  /** Stages the job will not run (already compliant, or stopped earlier). */
  skipRemaining(message: string): void {
    for (const s of this.stages) if (s.status === 'queued') Object.assign(s, { status: 'skipped', message });
  }

  device(id: string, outcome: DeviceOutcome): void {
    this.devices[id] = outcome;
  }

  /** Devices the job never got to: their child jobs end as not reached. */
  closeUnreached(message: string): void {
    for (const [id, o] of Object.entries(this.devices)) {
      if (o.state === 'queued' || o.state === 'running') this.devices[id] = { ...o, state: 'cancelled', message };
    }
  }

  emit(extra: Partial<JobMemo> = {}): void {
    const done = this.stages.filter((s) => s.status !== 'queued' && s.status !== 'running').length;
    this.publish({
      progress: {
        stage: this.current ?? 'queued',
        percent: Math.round((100 * done) / this.stages.length),
        message: this.stage(this.current ?? this.stages[0]!.name).message ?? '',
      },
      timeline: this.timeline,
      devices: { ...this.devices },
      ...extra,
    });
  }
}

/**
 * CoalescedMemo for a memo of several keys: flush() upserts, in one event, only the keys whose value changed since
 * they were last upserted, so a large key set once (hardware records) is not written again with every progress change.
 */
export class KeyedMemo {
  private pending: Record<string, unknown> = {};
  private readonly last = new Map<string, string>();

  constructor(private readonly upsert: (fields: Record<string, unknown>) => void) {}

  set(key: string, value: unknown): void {
    this.pending[key] = value;
  }

  flush(): void {
    const changed: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(this.pending)) {
      const json = JSON.stringify(value);
      if (json !== this.last.get(key)) changed[key] = value;
      this.last.set(key, json);
    }
    this.pending = {};
    if (Object.keys(changed).length) this.upsert(changed);
  }
}

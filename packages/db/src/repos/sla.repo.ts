import { randomUUID } from 'node:crypto';
import { and, asc, desc, eq, inArray, isNotNull, isNull, lt, or, sql, type SQL } from 'drizzle-orm';
import {
  judgeSla,
  slaKey,
  type FleetLifecycleState,
  watchedSlas,
  type JobKind,
  type SlaEvent,
  type SlaObjectType,
  type SlaPolicy,
  type SlaSubject,
  type SlaWatch,
} from '@fleet/domain';
import type { Db, DbOrTx } from '../client.js';
import { slaBreaches, webhookDeliveries, type SlaBreach, type WebhookDelivery } from '../schema/index.js';

/** A webhook and the events it takes (the config's; its URL and secret stay in the agent). */
export interface WebhookSubscription {
  name: string;
  events: readonly SlaEvent[];
}

/** An object past its limit now, as Postgres found it. */
interface SlaCandidate {
  objectType: SlaObjectType;
  objectId: string;
  objectName: string | null;
  siteId: string | null;
  watch: SlaWatch;
  state: string;
  jobKind: string | null;
  limitS: number;
  since: Date;
}

export interface SlaWatchResult {
  /** False when another agent held the watch: this one did nothing. */
  ran: boolean;
  opened: SlaBreach[];
  resolved: SlaBreach[];
  /** Webhook deliveries written to the outbox. */
  enqueued: number;
}

/** Key of the transaction-scoped advisory lock that keeps two agents from watching at once. */
const watchLock = sql`hashtextextended('fleet.sla-watch', 0)`;
const openJobStates = sql.raw(`('running', 'cancelling')`);
/**
 * A job watched on its own: a top-level one, or a child whose parent ended while it has not (a device of a terminated
 * campaign, still stopping), which no parent's clock covers any more.
 */
const watchedOnItsOwn = sql.raw(`(j.parent_id is null or not exists (
  select 1 from jobs p where p.id = j.parent_id and p.state in ('queued', 'running', 'cancelling')))`);
/** Rows per insert statement (Postgres takes at most 65,535 parameters). */
const chunk = 1000;

/**
 * One watch pass, in one transaction (docs/sla.md): remember the stage each watched job shows, find every object past
 * its limit with one statement, resolve the open breaches no longer among them, open the new ones, and write their
 * webhook deliveries to the outbox. Another agent's pass in progress makes this one a no-op.
 */
export async function watchSlas(
  db: Db,
  policy: SlaPolicy,
  webhooks: readonly WebhookSubscription[],
): Promise<SlaWatchResult> {
  return db.transaction(async (tx) => {
    // now() is the transaction's start: every statement of the pass measures against the same time.
    const [lock] = (
      await tx.execute<{ ok: boolean; now: Date }>(
        sql`select pg_try_advisory_xact_lock(${watchLock}) as ok, now() as now`,
      )
    ).rows;
    if (!lock?.ok) return { ran: false, opened: [], resolved: [], enqueued: 0 };
    const now = new Date(lock.now);
    const watched = watchedSlas(policy);
    await trackJobStages(tx, [
      ...new Set(watched.flatMap((w) => (w.subject.watch === 'job_stage' ? [w.subject.kind] : []))),
    ]);
    const candidates = await findPastLimit(tx, watched);
    // The SQL filter and the domain's rule agree; the rule has the last word.
    const current = candidates
      .filter((c) => judgeSla(c.limitS, c.since, now)?.breached)
      .map((c) => ({ ...c, slaKey: slaKey(subjectOf(c)) }));
    const resolved = await resolveBreaches(
      tx,
      current,
      watched.map((w) => slaKey(w.subject)),
    );
    const opened = await openBreaches(tx, current);
    const enqueued = await enqueueDeliveries(tx, webhooks, [
      ...opened.map((b) => ({ breach: b, event: 'sla.breached' as const })),
      ...resolved.map((b) => ({ breach: b, event: 'sla.resolved' as const })),
    ]);
    return { ran: true, opened, resolved, enqueued };
  });
}

function subjectOf(c: SlaCandidate): SlaSubject {
  switch (c.watch) {
    case 'lifecycle':
      return { watch: 'lifecycle', state: c.state as FleetLifecycleState };
    case 'job_running':
      return { watch: 'job_running', kind: c.jobKind as JobKind };
    case 'job_queued':
      return { watch: 'job_queued' };
    case 'job_stage':
      return { watch: 'job_stage', kind: c.jobKind as JobKind, stage: c.state };
  }
}

/**
 * Remembers since when each open top-level job of the given kinds shows its stage: a new stage starts its clock, the
 * rows of jobs that ended (or whose kind is no longer watched) go.
 */
async function trackJobStages(tx: DbOrTx, kinds: string[]): Promise<void> {
  await tx.execute(sql`
    delete from sla_job_stages s where not exists (
      select 1 from jobs j
      where j.id = s.job_id and j.state in ${openJobStates} and j.kind = any(${sql.param(kinds)}::text[]))`);
  if (kinds.length === 0) return;
  await tx.execute(sql`
    insert into sla_job_stages (job_id, stage, since)
    select j.id, j.progress->>'stage', now() from jobs j
    where j.state in ${openJobStates} and j.parent_id is null and j.kind = any(${sql.param(kinds)}::text[])
      and coalesce(j.progress->>'stage', '') <> ''
    on conflict (job_id) do update set stage = excluded.stage, since = excluded.since
      where sla_job_stages.stage is distinct from excluded.stage`);
}

/**
 * Every object past its limit now, in one statement: devices by their lifecycle state (since their last lifecycle
 * move, one probe of device_transitions_lifecycle_device_id_id_idx per device in a watched state), open jobs watched on
 * their own (jobs_open_idx; a child's parent by its primary key) by their running or queued time, and open top-level
 * jobs by the stage they show. Times are cut to milliseconds, so they compare equal with the breaches' own.
 */
async function findPastLimit(tx: DbOrTx, watched: { subject: SlaSubject; limitS: number }[]): Promise<SlaCandidate[]> {
  const limits = watched.map(({ subject: s, limitS }) => ({
    watch: s.watch,
    state: s.watch === 'lifecycle' ? s.state : s.watch === 'job_stage' ? s.stage : null,
    kind: s.watch === 'job_running' || s.watch === 'job_stage' ? s.kind : null,
    limit_s: limitS,
  }));
  const jobName = sql`coalesce((select name from devices where id = j.device_id),
    (select name from racks where id = j.rack_id), (select name from campaigns where id = j.id))`;
  const jobType = sql`case when j.kind = 'firmware.campaign' then 'campaign' else 'job' end`;
  const past = (since: SQL) => sql`${since} < now() - make_interval(secs => l.limit_s)`;
  const ms = (t: SQL) => sql`date_trunc('milliseconds', ${t})`;
  const res = await tx.execute<{
    object_type: SlaObjectType;
    object_id: string;
    object_name: string | null;
    site_id: string | null;
    watch: SlaWatch;
    state: string;
    job_kind: string | null;
    limit_s: number;
    since: Date;
  }>(sql`
    with l as (
      select * from jsonb_to_recordset(${JSON.stringify(limits)}::jsonb)
        as x(watch text, state text, kind text, limit_s integer)
    ), c as (
      select 'device' as object_type, d.id as object_id, d.name as object_name, d.site_id, l.watch,
        d.fleet_lifecycle as state, null::text as job_kind, l.limit_s, m.since
      from l
      join devices d on l.watch = 'lifecycle' and d.fleet_lifecycle = l.state and d.deleted_at is null
      cross join lateral (select ${ms(sql`coalesce((select t.at from device_transitions t
        where t.device_id = d.id and t.axis = 'lifecycle' and t.condition_type is null
        order by t.id desc limit 1), d.created_at)`)} as since) m
      where ${past(sql`m.since`)}
      union all
      select ${jobType}, j.id, ${jobName}, j.site_id, l.watch, j.state, j.kind, l.limit_s,
        ${ms(sql`coalesce(j.started_at, j.created_at)`)}
      from l join jobs j on l.watch = 'job_running' and j.kind = l.kind and j.state in ${openJobStates}
        and ${watchedOnItsOwn}
      where ${past(sql`coalesce(j.started_at, j.created_at)`)}
      union all
      select ${jobType}, j.id, ${jobName}, j.site_id, l.watch, j.state, j.kind, l.limit_s, ${ms(sql`j.created_at`)}
      from l join jobs j on l.watch = 'job_queued' and j.state = 'queued' and ${watchedOnItsOwn}
      where ${past(sql`j.created_at`)}
      union all
      select ${jobType}, j.id, ${jobName}, j.site_id, l.watch, s.stage, j.kind, l.limit_s, ${ms(sql`s.since`)}
      from l join sla_job_stages s on l.watch = 'job_stage' and split_part(btrim(s.stage), ' ', 1) = l.state
      join jobs j on j.id = s.job_id and j.kind = l.kind and j.state in ${openJobStates}
      where ${past(sql`s.since`)}
    )
    select * from c`);
  return res.rows.map((r) => ({
    objectType: r.object_type,
    objectId: r.object_id,
    objectName: r.object_name,
    siteId: r.site_id,
    watch: r.watch,
    state: r.state,
    jobKind: r.job_kind,
    limitS: Number(r.limit_s),
    since: new Date(r.since),
  }));
}

type Current = SlaCandidate & { slaKey: string };

/**
 * Resolves the open breaches whose object is no longer past that limit since that time (it moved on, its job ended,
 * it was deleted, its limit was raised): `cleared`; or whose key the policy no longer watches: `unwatched`.
 */
async function resolveBreaches(tx: DbOrTx, current: Current[], watchedKeys: string[]): Promise<SlaBreach[]> {
  const still = current.map((c) => ({
    object_type: c.objectType,
    object_id: c.objectId,
    sla_key: c.slaKey,
    since: c.since.toISOString(),
  }));
  return tx
    .update(slaBreaches)
    .set({
      resolvedAt: sql`now()`,
      resolution: sql`case when ${slaBreaches.slaKey} = any(${sql.param(watchedKeys)}::text[])
        then 'cleared' else 'unwatched' end`,
    })
    .where(
      and(
        isNull(slaBreaches.resolvedAt),
        sql`not exists (select 1 from jsonb_to_recordset(${JSON.stringify(still)}::jsonb)
          as c(object_type text, object_id uuid, sla_key text, since timestamptz)
          where c.object_type = ${slaBreaches.objectType} and c.object_id = ${slaBreaches.objectId}
            and c.sla_key = ${slaBreaches.slaKey} and c.since = ${slaBreaches.since})`,
      ),
    )
    .returning();
}

/** Opens a breach for each current one not open already (the open unique index drops the repeats). */
async function openBreaches(tx: DbOrTx, current: Current[]): Promise<SlaBreach[]> {
  const opened: SlaBreach[] = [];
  for (let i = 0; i < current.length; i += chunk) {
    const rows = current.slice(i, i + chunk).map((c) => ({
      objectType: c.objectType,
      objectId: c.objectId,
      objectName: c.objectName,
      siteId: c.siteId,
      slaKey: c.slaKey,
      state: c.state,
      jobKind: c.jobKind,
      limitS: c.limitS,
      since: c.since,
    }));
    opened.push(
      ...(await tx
        .insert(slaBreaches)
        .values(rows)
        .onConflictDoNothing({
          target: [slaBreaches.objectType, slaBreaches.objectId, slaBreaches.slaKey],
          where: sql`${slaBreaches.resolvedAt} is null`,
        })
        .returning()),
    );
  }
  return opened;
}

/** The outbox rows of breaches opened or resolved, one per webhook that takes the event. */
async function enqueueDeliveries(
  tx: DbOrTx,
  webhooks: readonly WebhookSubscription[],
  events: { breach: SlaBreach; event: SlaEvent }[],
): Promise<number> {
  const rows = events.flatMap(({ breach, event }) =>
    webhooks
      .filter((w) => w.events.includes(event))
      .map((w) => {
        const id = randomUUID();
        return { id, breachId: breach.id, webhook: w.name, event, payload: slaEventPayload(id, event, breach) };
      }),
  );
  let n = 0;
  for (let i = 0; i < rows.length; i += chunk) {
    const inserted = await tx
      .insert(webhookDeliveries)
      .values(rows.slice(i, i + chunk))
      .onConflictDoNothing()
      .returning({ id: webhookDeliveries.id });
    n += inserted.length;
  }
  return n;
}

/** A breach as the API and webhooks show it; `at` measures how overdue an open one is. */
export function slaBreachJson(b: SlaBreach, at: Date) {
  const verdict = judgeSla(b.limitS, b.since, b.resolvedAt ?? at)!;
  return {
    id: b.id,
    object_type: b.objectType,
    object_id: b.objectId,
    object_name: b.objectName,
    site_id: b.siteId,
    sla_key: b.slaKey,
    watch: b.slaKey.split(':', 1)[0] as SlaWatch,
    state: b.state,
    job_kind: b.jobKind,
    limit_s: b.limitS,
    since: b.since.toISOString(),
    due_at: verdict.dueAt.toISOString(),
    breached_at: b.breachedAt.toISOString(),
    /** Seconds past the limit: now for an open breach, at its resolution for a resolved one. */
    overdue_s: Math.max(0, Math.floor(verdict.overdueS)),
    resolved_at: b.resolvedAt?.toISOString() ?? null,
    resolution: b.resolution,
  };
}

/** The body of a webhook delivery; the delivery id is in it, so the signature covers it. */
export function slaEventPayload(deliveryId: string, event: SlaEvent, breach: SlaBreach): Record<string, unknown> {
  return {
    delivery_id: deliveryId,
    event,
    occurred_at: (event === 'sla.resolved' ? breach.resolvedAt! : breach.breachedAt).toISOString(),
    breach: slaBreachJson(breach, event === 'sla.resolved' ? breach.resolvedAt! : breach.breachedAt),
  };
}

/** Open breaches by object type and key: the agent's gauge. */
export async function openSlaBreachCounts(
  db: DbOrTx,
): Promise<{ objectType: SlaObjectType; slaKey: string; count: number }[]> {
  return db
    .select({
      objectType: slaBreaches.objectType,
      slaKey: slaBreaches.slaKey,
      count: sql<number>`count(*)::int`,
    })
    .from(slaBreaches)
    .where(isNull(slaBreaches.resolvedAt))
    .groupBy(slaBreaches.objectType, slaBreaches.slaKey);
}

/**
 * Leases up to `limit` due deliveries of the given webhooks to one sender: next_attempt_at moves past the lease (a
 * sender that dies mid-attempt leaves them due again when it runs out) and the attempt is counted.
 */
export async function leaseDueDeliveries(
  db: DbOrTx,
  webhooks: string[],
  limit: number,
  leaseS: number,
): Promise<WebhookDelivery[]> {
  if (webhooks.length === 0) return [];
  const res = await db.execute<{ id: string }>(sql`
    update webhook_deliveries set next_attempt_at = now() + make_interval(secs => ${leaseS}), attempts = attempts + 1
    where id in (
      select id from webhook_deliveries
      where status = 'pending' and next_attempt_at <= now() and webhook = any(${sql.param(webhooks)}::text[])
      order by next_attempt_at, id limit ${limit} for update skip locked)
    returning id`);
  const ids = res.rows.map((r) => r.id);
  if (ids.length === 0) return [];
  return db
    .select()
    .from(webhookDeliveries)
    .where(inArray(webhookDeliveries.id, ids))
    .orderBy(asc(webhookDeliveries.nextAttemptAt), asc(webhookDeliveries.id));
}

/** What an attempt got: the HTTP status when an answer came, the error otherwise (or besides a non-2xx). */
export interface DeliveryAttempt {
  status?: number | undefined;
  error?: string | undefined;
}

export async function markDeliveryDelivered(db: DbOrTx, id: string, status: number): Promise<void> {
  await db
    .update(webhookDeliveries)
    .set({ status: 'delivered', deliveredAt: sql`now()`, lastStatus: status, lastError: null })
    .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.status, 'pending')));
}

/** A failed attempt: due again in `retryInS`, or `failed` for good when retryInS is undefined. */
export async function markDeliveryFailedAttempt(
  db: DbOrTx,
  id: string,
  attempt: DeliveryAttempt,
  retryInS: number | undefined,
): Promise<void> {
  await db
    .update(webhookDeliveries)
    .set({
      lastStatus: attempt.status ?? null,
      lastError: attempt.error ?? null,
      ...(retryInS === undefined
        ? { status: 'failed' as const }
        : { nextAttemptAt: sql`now() + make_interval(secs => ${retryInS})` }),
    })
    .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.status, 'pending')));
}

/** Pending deliveries of webhooks the config no longer names fail (they would wait forever); how many. */
export async function failUnconfiguredDeliveries(db: DbOrTx, webhooks: string[]): Promise<number> {
  const rows = await db
    .update(webhookDeliveries)
    .set({ status: 'failed', lastError: 'the webhook is no longer configured' })
    .where(
      and(
        eq(webhookDeliveries.status, 'pending'),
        sql`not (${webhookDeliveries.webhook} = any(${sql.param(webhooks)}::text[]))`,
      ),
    )
    .returning({ id: webhookDeliveries.id });
  return rows.length;
}

/** Pending deliveries per webhook, and when the earliest is due (the sender sleeps until then). */
export async function pendingDeliveries(
  db: DbOrTx,
): Promise<{ byWebhook: Map<string, number>; nextDueAt: Date | undefined }> {
  const rows = await db
    .select({
      webhook: webhookDeliveries.webhook,
      count: sql<number>`count(*)::int`,
      nextDueAt: sql<string>`min(${webhookDeliveries.nextAttemptAt})`,
    })
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.status, 'pending'))
    .groupBy(webhookDeliveries.webhook);
  const due = rows.map((r) => new Date(r.nextDueAt).getTime());
  return {
    byWebhook: new Map(rows.map((r) => [r.webhook, r.count])),
    nextDueAt: due.length ? new Date(Math.min(...due)) : undefined,
  };
}

export interface SlaBreachPageQuery {
  limit: number;
  /** Keyset position: the last row of the previous page. */
  after?: { breachedAt: Date; id: string } | undefined;
  open?: boolean | undefined;
  objectType?: string[] | undefined;
  objectId?: string[] | undefined;
  siteId?: string[] | undefined;
  slaKey?: string[] | undefined;
}

/** Newest first, keyset on (breached_at, id). */
export async function listSlaBreaches(db: DbOrTx, q: SlaBreachPageQuery): Promise<SlaBreach[]> {
  const c: SQL[] = [];
  if (q.open !== undefined) c.push(q.open ? isNull(slaBreaches.resolvedAt) : isNotNull(slaBreaches.resolvedAt));
  if (q.objectType?.length) c.push(inArray(slaBreaches.objectType, q.objectType as SlaObjectType[]));
  if (q.objectId?.length) c.push(inArray(slaBreaches.objectId, q.objectId));
  if (q.siteId?.length) c.push(inArray(slaBreaches.siteId, q.siteId));
  if (q.slaKey?.length) c.push(inArray(slaBreaches.slaKey, q.slaKey));
  if (q.after)
    c.push(
      or(
        lt(slaBreaches.breachedAt, q.after.breachedAt),
        and(eq(slaBreaches.breachedAt, q.after.breachedAt), lt(slaBreaches.id, q.after.id)),
      )!,
    );
  return db
    .select()
    .from(slaBreaches)
    .where(c.length ? and(...c) : undefined)
    .orderBy(desc(slaBreaches.breachedAt), desc(slaBreaches.id))
    .limit(q.limit);
}

export async function getSlaBreach(db: DbOrTx, id: string): Promise<SlaBreach | undefined> {
  const [row] = await db.select().from(slaBreaches).where(eq(slaBreaches.id, id));
  return row;
}

/** The deliveries of the given breaches, oldest first: what their escalation did. */
export async function deliveriesOfBreaches(db: DbOrTx, breachIds: string[]): Promise<WebhookDelivery[]> {
  if (breachIds.length === 0) return [];
  return db
    .select()
    .from(webhookDeliveries)
    .where(inArray(webhookDeliveries.breachId, breachIds))
    .orderBy(asc(webhookDeliveries.createdAt), asc(webhookDeliveries.id));
}

import { loadavg } from 'node:os';
import { createFleetClient, unwrap, type Job } from '@fleet/client';
import { Stack } from '../test/harness/stack.js';
import { prepareStackBench } from './lib/environment.js';
import { activityTimes } from './lib/job-timeline.js';
import { compareSides, percentile } from './lib/page-load.js';

const sites = 4;
/** The activities' heartbeat timeout; every cut lasts longer, so Temporal gives up on the attempts it caught. */
const heartbeatTimeoutS = 3;
/** As bench/hub-list.ts: 20 concurrent clients. */
const clients = 20;

/**
 * Four sites, each with its own satellite reaching Temporal through a link of its own, behind two hub replicas. Every
 * rack of every site is powered on (shelves, switch trays, compute trays) and, once each site's satellite has sent its
 * first reset, all four links are cut for longer than the heartbeat timeout, then restored. For every power activity
 * the cut caught running (scheduled before it, not completed before it, and completed by a retry once Temporal gave up
 * on the caught attempt, per the rack job's Temporal history), the time from the restore to Temporal recording it
 * completed gives `resume_after_reconnect_s`; those still queued at the cut are reported apart, as they also wait
 * their device's power-on. The simulator's request logs count the devices switched on more than once. Then the hub's
 * filtered device page from 20 concurrent clients split round-robin over the two replicas, against the same load on
 * one replica in the same run. Arguments: racks per site, cut seconds, list requests per side.
 */
export async function run(args: string[]): Promise<Record<string, unknown>> {
  const racksPerSite = Number(args[0] ?? 2);
  const cutS = Number(args[1] ?? 10);
  const requests = Number(args[2] ?? 2000);
  // Sides in turn, four times: load from elsewhere on the machine falls on both.
  const rounds = 4;
  const loadAtStart = loadavg()[0]!;
  const cleanup = await prepareStackBench('sites');
  const stack = new Stack({
    sites,
    racks: racksPerSite,
    hubs: 2,
    satelliteLink: 'all-sites',
    payloadEncryption: false,
    leakScan: false,
    rateLimit: { enabled: false },
    // A 60 s power-on takes 3 s: activities are still running when the links go down.
    timeScale: 0.05,
    timings: { powerOnS: 60 },
    pollIntervalMs: 200,
    projectionIntervalMs: 500,
    power: { heartbeatTimeoutS, maximumAttempts: 5, settleTimeoutS: 120 },
  });
  await stack.start();
  try {
    const operators = stack.hubUrls.map((baseUrl) => createFleetClient({ baseUrl, token: stack.tokens.operator }));
    // From the hub: the stack's rackIds are by rack name, which each site repeats.
    const racks = (await unwrap(operators[0]!.GET('/v1/racks', { params: { query: { site_id: stack.siteIds } } })))
      .items;
    if (racks.length !== sites * racksPerSite) throw new Error(`the hub lists ${racks.length} racks`);
    const rackIds = racks.map((r) => r.id);
    // Jobs go to the replicas in turn: either one starts work on any site.
    const powerAll = (op: 'on' | 'off') =>
      Promise.all(
        rackIds.map(
          async (id, i) =>
            (
              await unwrap(
                operators[i % operators.length]!.POST('/v1/racks/{id}/power', {
                  params: { path: { id } },
                  body: { op },
                }),
              )
            ).id,
        ),
      );
    const settle = async (ids: string[], what: string) => {
      const jobs = await Promise.all(ids.map((id) => stack.waitForJob(id, 600_000)));
      const bad = jobs.filter((j) => j.state !== 'succeeded');
      if (bad.length)
        throw new Error(`${bad.length} rack power-${what} jobs did not succeed: ${JSON.stringify(bad[0])}`);
      return jobs;
    };
    const devices = stack.fleet!.devices.map((d) => d.name);
    await settle(await powerAll('off'), 'off');
    for (let i = 0; i < devices.length; i += 32)
      await Promise.all(
        devices
          .slice(i, i + 32)
          .map((name) =>
            fetch(`${stack.simAdminUrl}/bmcs/${name}/requests`, { method: 'DELETE' }).then((r) => r.text()),
          ),
      );

    const startedAt = Date.now();
    const onJobs = await powerAll('on');
    const siteOfJob = new Map(onJobs.map((id, i) => [id, racks[i]!.site_id]));
    // Cut once every site's satellite has sent its first reset.
    const logFrom = new Map(stack.siteIds.map((site) => [site, stack.satellites.get(site)!.output.length]));
    const started = (site: string) =>
      stack.satellites.get(site)!.output.slice(logFrom.get(site)).includes('"msg":"reset sent"');
    while (!stack.siteIds.every(started)) {
      if (Date.now() - startedAt > 120_000) throw new Error('not every site started its rack power-on within 120 s');
      await new Promise((r) => setTimeout(r, 100));
    }
    for (const link of stack.satelliteLinks.values()) link.cut();
    const cutEnds = Date.now() + cutS * 1000;
    let succeededWhileCut = 0;
    let polls = 0;
    while (Date.now() < cutEnds) {
      const api = operators[polls++ % operators.length]!;
      const states = await Promise.all(
        onJobs.map(async (id) => (await unwrap(api.GET('/v1/jobs/{id}', { params: { path: { id } } }))).state),
      );
      succeededWhileCut = Math.max(succeededWhileCut, states.filter((s) => s === 'succeeded').length);
      await new Promise((r) => setTimeout(r, 500));
    }
    for (const link of stack.satelliteLinks.values()) link.restore();
    const done: Job[] = await settle(onJobs, 'on');
    const makespanS = (Math.max(...done.map((j) => Date.parse(j.finished_at!))) - startedAt) / 1000;

    // From each rack job's Temporal history (its workflow id is the job id): the activities in flight when the link
    // went down (scheduled before, not completed before) and when Temporal recorded each one completed.
    const cuts = new Map(
      stack.siteIds.map((site) => {
        const [start, end] = stack.satelliteLinks.get(site)!.cuts.at(-1)!;
        return [site, { start, end: end! }];
      }),
    );
    const histories = await stack.withTemporal((client) =>
      Promise.all(
        onJobs.map(async (id) => ({ site: siteOfJob.get(id)!, activities: await activityTimes(client, id) })),
      ),
    );
    /** In flight at the cut and running: completed by a retry, after Temporal gave up on the attempt the cut caught. */
    const resumeMs: number[] = [];
    /** In flight at the cut but not yet picked up by the satellite: their first attempt ran after the restore. */
    const queuedMs: number[] = [];
    const firstMs = new Map<string, number>();
    for (const { site, activities } of histories) {
      const cut = cuts.get(site)!;
      for (const a of activities) {
        if (a.completedAt === undefined) throw new Error(`${site}: activity ${a.activityId} never completed`);
        if (a.completedAt < cut.end) continue;
        firstMs.set(site, Math.min(firstMs.get(site) ?? Infinity, a.completedAt - cut.end));
        if (a.scheduledAt < cut.start) ((a.attempt ?? 1) > 1 ? resumeMs : queuedMs).push(a.completedAt - cut.end);
      }
    }
    if (resumeMs.length === 0) throw new Error('the cut caught no running power activity: nothing to measure');

    // A power-on asks each device for one reset; more means a retry sent it again.
    const resets = await Promise.all(
      devices.map(
        async (name) =>
          (await stack.simRequests(name)).filter(
            (r) => r.method === 'POST' && r.path.endsWith('.Reset') && r.status < 300,
          ).length,
      ),
    );

    const viewers = stack.hubUrls.map((baseUrl) => createFleetClient({ baseUrl, token: stack.tokens.viewer }));
    const query = { site_id: stack.siteIds, role: ['compute-tray'], limit: 100 };
    const pages = viewers.map(
      (api) => async () => (await unwrap(api.GET('/v1/devices', { params: { query } }))).items.length,
    );
    let turn = 0;
    const hubs = stack.hubs.map((h, i) => ({ name: `hub${i + 1}`, pid: h.pid! }));
    const [two, one] = await compareSides(
      [
        { what: 'two hub replicas', page: () => pages[turn++ % pages.length]!(), servers: hubs },
        { what: 'one hub replica', page: pages[0]!, servers: hubs.slice(0, 1) },
      ],
      {
        requests,
        rounds,
        clients,
        expected: Math.min(query.limit, sites * racksPerSite * 18),
        admin: stack.dbHandle.pool,
        database: new URL(stack.database.url).pathname.slice(1),
      },
    );

    const round = (n: number) => Number(n.toFixed(2));
    return {
      sites,
      devices_per_site: racksPerSite * 35,
      racks_per_site: racksPerSite,
      cut_s: cutS,
      cut_measured_s: round(Math.max(...[...cuts.values()].map((c) => (c.end - c.start) / 1000))),
      heartbeat_timeout_s: heartbeatTimeoutS,
      cut_sites: stack.satelliteLinks.size,
      resume_after_reconnect_s: round(percentile(resumeMs, 0.95) / 1000),
      resume_after_reconnect_p50_s: round(percentile(resumeMs, 0.5) / 1000),
      resume_after_reconnect_max_s: round(Math.max(...resumeMs) / 1000),
      activities_running_at_cut: resumeMs.length,
      activities_queued_at_cut: queuedMs.length,
      // These also wait their device's simulated power-on (3 s) after the restore.
      queued_resume_after_reconnect_s: queuedMs.length ? round(percentile(queuedMs, 0.95) / 1000) : null,
      first_completion_after_reconnect_s: Object.fromEntries(
        [...firstMs].map(([site, ms]) => [site, round(ms / 1000)]),
      ),
      duplicate_device_requests: resets.filter((n) => n > 1).length,
      duplicate_devices: Object.fromEntries(devices.flatMap((name, i) => (resets[i]! > 1 ? [[name, resets[i]]] : []))),
      devices_switched_on_once: resets.filter((n) => n === 1).length,
      jobs_succeeded_while_cut: succeededWhileCut,
      rack_power_on_makespan_s: round(makespanS),
      hub_replicas: stack.hubUrls.length,
      list_p50_ms_two_replicas: two.p50,
      list_p99_ms_two_replicas: two.p99,
      list_p50_ms_one_replica: one.p50,
      list_p99_ms_one_replica: one.p99,
      list_cpu_ms_two_replicas: two.cpuMs,
      list_cpu_ms_one_replica: one.cpuMs,
      list_requests_per_side: two.requests,
      list_errors: two.errors + one.errors,
      concurrent_clients: clients,
      hub_pool_size_per_replica: 5,
      simulated_time_scale: 0.05,
      load_avg: { at_start_1m: round(loadAtStart), at_end_1m: round(loadavg()[0]!) },
    };
  } finally {
    await stack.stop();
    await cleanup();
  }
}

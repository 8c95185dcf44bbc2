import { keepPreviousData, queryOptions, useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { unwrap, type Job, type paths, type RackDetail } from '@fleet/client';
import { api } from './client';
import { usePollInterval } from './live';

type Query<P extends keyof paths> = paths[P] extends { get: { parameters: { query?: infer Q } } }
  ? NonNullable<Q>
  : never;
export type DeviceFilter = Omit<Query<'/v1/devices'>, 'limit' | 'cursor'>;
export type JobFilter = Omit<Query<'/v1/jobs'>, 'limit' | 'cursor'>;

export const terminalStates: readonly Job['state'][] = ['succeeded', 'failed', 'cancelled'];
export const isTerminal = (state: Job['state']) => terminalStates.includes(state);

/** 2 s while something may still change (live stream down), none once it is terminal. */
function useLivePoll(terminal: (data: unknown) => boolean) {
  const interval = usePollInterval(2000);
  return (query: { state: { data: unknown } }) =>
    query.state.data !== undefined && terminal(query.state.data) ? false : interval;
}

export const sitesQuery = queryOptions({
  queryKey: ['sites'],
  queryFn: () => unwrap(api().GET('/v1/sites')),
});

export const useSites = () => useQuery(sitesQuery);

/** The hub's hardware table: node types with their kind and profiles. It changes only with a hub release. */
export const useHardware = () =>
  useQuery({ queryKey: ['hardware'], queryFn: () => unwrap(api().GET('/v1/hardware')), staleTime: Infinity });

export const useRacks = (siteId?: string) =>
  useQuery({
    queryKey: ['racks', siteId ?? null],
    queryFn: () => unwrap(api().GET('/v1/racks', { params: { query: siteId ? { site_id: [siteId] } : {} } })),
  });

export const useRack = (id: string, enabled = true) =>
  useQuery({
    enabled,
    queryKey: ['rack', id],
    queryFn: () => unwrap(api().GET('/v1/racks/{id}', { params: { path: { id } } })),
    refetchInterval: usePollInterval(5000),
  });

export const useDevicePages = (filter: DeviceFilter) =>
  useInfiniteQuery({
    queryKey: ['devices', 'pages', filter],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      unwrap(api().GET('/v1/devices', { params: { query: { ...filter, limit: 500, cursor: pageParam } } })),
    getNextPageParam: (page) => page.next_cursor ?? undefined,
    placeholderData: keepPreviousData,
  });

/**
 * A site's device counts (by role, power state, lifecycle), racks, open issues and unfinished jobs, counted by the
 * hub. Under the 'overview' key, which device, job and campaign events invalidate.
 */
export const useSiteSummary = (siteId: string) =>
  useQuery({
    queryKey: ['overview', 'site-summary', siteId],
    queryFn: () => unwrap(api().GET('/v1/sites/{id}/summary', { params: { path: { id: siteId } } })),
    // Racks and inventory issues send no events: a slow poll keeps them honest while the stream is live.
    refetchInterval: usePollInterval(15_000, 60_000),
  });

export const useDevice = (id: string) =>
  useQuery({
    queryKey: ['device', id],
    queryFn: () => unwrap(api().GET('/v1/devices/{id}', { params: { path: { id } } })),
    refetchInterval: usePollInterval(5000),
  });

/**
 * The device's hardware as an enrolment last read it; null before any read (the hub's 404). Under the device's key,
 * so the device events an enrolment's lifecycle moves send refetch it.
 */
export const useDeviceHardware = (id: string) =>
  useQuery({
    queryKey: ['device', id, 'hardware'],
    queryFn: async () => {
      const answer = await api().GET('/v1/devices/{id}/hardware', { params: { path: { id } } });
      if (answer.response.status === 404) return null;
      return unwrap(Promise.resolve(answer));
    },
    refetchInterval: usePollInterval(15_000),
  });

export const useJobs = (filter: JobFilter, limit = 100) =>
  useQuery({
    queryKey: ['jobs', filter, limit],
    queryFn: () => unwrap(api().GET('/v1/jobs', { params: { query: { ...filter, limit } } })),
    refetchInterval: usePollInterval(5000),
    placeholderData: keepPreviousData,
  });

export const useJob = (id: string) =>
  useQuery({
    queryKey: ['job', id],
    queryFn: () => unwrap(api().GET('/v1/jobs/{id}', { params: { path: { id } } })),
    refetchInterval: useLivePoll((job) => isTerminal((job as Job).state)),
  });

/** A parent's per-device jobs; keyed by the parent's state so its last change refetches them once more. */
export const useJobChildren = (id: string, parentState: Job['state']) =>
  useQuery({
    queryKey: ['jobs', { parent_id: [id] }, 'children', parentState],
    queryFn: async () => {
      const out: Job[] = [];
      let cursor: string | undefined;
      do {
        const query = { parent_id: [id], limit: 1000, cursor };
        const page = await unwrap(api().GET('/v1/jobs', { params: { query } }));
        out.push(...page.items);
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
      return out;
    },
    refetchInterval: useLivePoll(() => isTerminal(parentState)),
    placeholderData: keepPreviousData,
  });

const openStates = ['queued', 'running', 'cancelling'] as const;

/**
 * Jobs now queued or running on a rack: the rack elevation's "job activity" axis. Its rack-level jobs (rack sequences,
 * which act through per-device children), and every open job on its devices by device id, whatever its parent: a
 * device of a campaign terminated in Temporal is still stopping after its campaign ended.
 */
export const useRackActivity = (rack: RackDetail | undefined, enabled: boolean) =>
  useQuery({
    queryKey: ['rack-activity', rack?.id ?? null],
    enabled: enabled && !!rack,
    queryFn: async () => {
      const deviceIds = [...new Set(rack!.elevation.map((slot) => slot.device_id))];
      const [onRack, onDevices] = await Promise.all([
        unwrap(
          api().GET('/v1/jobs', {
            params: { query: { rack_id: [rack!.id], state: [...openStates], limit: 200 } },
          }),
        ),
        deviceIds.length
          ? unwrap(
              api().GET('/v1/jobs', {
                params: { query: { device_id: deviceIds, state: [...openStates], limit: 1000 } },
              }),
            )
          : { items: [] },
      ]);
      // Top-level jobs on the rack: its sequences and batches (a single device's job there has a device_id).
      const rackJobs = onRack.items.filter((j) => !j.target.device_id);
      return { rackJobs, deviceJobs: onDevices.items };
    },
    refetchInterval: usePollInterval(2000),
  });

export const useIssues = (filter: Query<'/v1/inventory-issues'> = {}) =>
  useQuery({
    queryKey: ['issues', filter],
    queryFn: () => unwrap(api().GET('/v1/inventory-issues', { params: { query: { limit: 1000, ...filter } } })),
    refetchInterval: usePollInterval(30_000),
  });

export const useComplianceSummary = (siteId?: string, rackId?: string) =>
  useQuery({
    queryKey: ['compliance', 'summary', siteId ?? null, rackId ?? null],
    queryFn: () =>
      unwrap(
        api().GET('/v1/firmware/compliance/summary', {
          params: { query: { ...(siteId ? { site_id: [siteId] } : {}), ...(rackId ? { rack_id: [rackId] } : {}) } },
        }),
      ),
    retry: false,
  });

export const useRackCompliance = (rackId: string, enabled: boolean) =>
  useQuery({
    queryKey: ['compliance', 'rack', rackId],
    queryFn: () =>
      unwrap(api().GET('/v1/firmware/compliance', { params: { query: { rack_id: [rackId], limit: 1000 } } })),
    enabled,
    retry: false,
  });

export const usePackages = () =>
  useQuery({
    queryKey: ['packages'],
    queryFn: () => unwrap(api().GET('/v1/firmware/packages', { params: { query: { limit: 1000 } } })),
    retry: false,
  });

export const usePackage = (id: string) =>
  useQuery({
    queryKey: ['package', id],
    queryFn: () => unwrap(api().GET('/v1/firmware/packages/{id}', { params: { path: { id } } })),
  });

export const useManifests = () =>
  useQuery({
    queryKey: ['manifests'],
    queryFn: () => unwrap(api().GET('/v1/firmware/manifests', { params: { query: { limit: 1000 } } })),
    retry: false,
  });

export const useCampaigns = (filter: Query<'/v1/firmware-campaigns'> = {}) =>
  useQuery({
    queryKey: ['campaigns', filter],
    queryFn: () => unwrap(api().GET('/v1/firmware-campaigns', { params: { query: { limit: 200, ...filter } } })),
    refetchInterval: usePollInterval(5000),
  });

export const useCampaign = (id: string) =>
  useQuery({
    queryKey: ['campaign', id],
    queryFn: () => unwrap(api().GET('/v1/firmware-campaigns/{id}', { params: { path: { id } } })),
    refetchInterval: useLivePoll((c) => isTerminal((c as { job: Job }).job.state)),
  });

export const useCampaignDevices = (id: string, campaignState: Job['state']) =>
  useQuery({
    queryKey: ['campaign', id, 'devices', campaignState],
    queryFn: () =>
      unwrap(api().GET('/v1/firmware-campaigns/{id}/devices', { params: { path: { id }, query: { limit: 1000 } } })),
    refetchInterval: useLivePoll(() => isTerminal(campaignState)),
    placeholderData: keepPreviousData,
  });

/**
 * The device's last health reading from its site's observer; null until it has been observed (the hub's 404). Under
 * the device's key: its health events, and the device events its readings' condition changes send, refetch it.
 */
export const useDeviceHealth = (id: string) =>
  useQuery({
    queryKey: ['device', id, 'health'],
    queryFn: async () => {
      const answer = await api().GET('/v1/devices/{id}/health', { params: { path: { id } } });
      if (answer.response.status === 404) return null;
      return unwrap(Promise.resolve(answer));
    },
    refetchInterval: usePollInterval(10_000, 30_000),
  });

export type RmaFilter = Omit<Query<'/v1/rma'>, 'limit' | 'cursor'>;
export type SlaBreachFilter = Omit<Query<'/v1/sla-breaches'>, 'limit' | 'cursor'>;
export type FacilityEventFilter = Omit<Query<'/v1/facility-events'>, 'limit' | 'cursor'>;

// RMA cases, breaches and facility events have events of their own (rma, sla_breach, facility_event): while the stream
// is open they refetch on those, and once a minute for what no event announces (a breach's overdue time grows).
export const useRmaCases = (filter: RmaFilter) =>
  useInfiniteQuery({
    queryKey: ['rma', 'pages', filter],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      unwrap(api().GET('/v1/rma', { params: { query: { ...filter, limit: 100, cursor: pageParam } } })),
    getNextPageParam: (page) => page.next_cursor ?? undefined,
    placeholderData: keepPreviousData,
    refetchInterval: usePollInterval(10_000, 60_000),
  });

export const useRmaCase = (id: string) =>
  useQuery({
    queryKey: ['rma', id],
    queryFn: () => unwrap(api().GET('/v1/rma/{id}', { params: { path: { id } } })),
    refetchInterval: usePollInterval(5000, 60_000),
  });

export const useSlaBreaches = (filter: SlaBreachFilter) =>
  useInfiniteQuery({
    queryKey: ['sla-breaches', filter],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      unwrap(api().GET('/v1/sla-breaches', { params: { query: { ...filter, limit: 100, cursor: pageParam } } })),
    getNextPageParam: (page) => page.next_cursor ?? undefined,
    placeholderData: keepPreviousData,
    refetchInterval: usePollInterval(10_000, 60_000),
  });

export const useFacilityEvents = (filter: FacilityEventFilter) =>
  useInfiniteQuery({
    queryKey: ['facility-events', filter],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      unwrap(api().GET('/v1/facility-events', { params: { query: { ...filter, limit: 100, cursor: pageParam } } })),
    getNextPageParam: (page) => page.next_cursor ?? undefined,
    placeholderData: keepPreviousData,
    refetchInterval: usePollInterval(10_000, 60_000),
  });

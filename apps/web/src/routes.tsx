import { createRootRoute, createRoute, createRouter, lazyRouteComponent } from '@tanstack/react-router';
import { Shell } from './Shell';

// Code-based route tree; each view is its own chunk, loaded when first visited.
const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);

export interface DeviceSearch {
  site?: string;
  rack?: string;
  role?: string;
  power?: string;
  lifecycle?: string;
  q?: string;
}
export interface JobSearch {
  state?: string;
  kind?: string;
  site?: string;
}
export interface AuditSearch {
  actor?: string;
  action?: string;
  target?: string;
  /** RFC 3339 instants (UTC), as the hub takes them. */
  since?: string;
  until?: string;
}
export interface RmaSearch {
  state?: string;
  site?: string;
  device?: string;
}
export interface SlaSearch {
  status?: string;
  type?: string;
  site?: string;
  object?: string;
}
export interface FacilitySearch {
  state?: string;
  kind?: string;
  severity?: string;
}
export type Axis = 'power' | 'jobs' | 'issues' | 'compliance';
export const axes: readonly Axis[] = ['power', 'jobs', 'issues', 'compliance'];

// The router parses search values as JSON: a token named "42" arrives as a number.
const text = (v: unknown) => (typeof v === 'number' ? String(v) : str(v));
const instant = (v: unknown) => {
  const s = str(v);
  const t = s === undefined ? NaN : Date.parse(s);
  return Number.isNaN(t) ? undefined : new Date(t).toISOString();
};

const rootRoute = createRootRoute({ component: Shell });

const overviewRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/',
  component: lazyRouteComponent(() => import('./views/Overview'), 'Overview'),
});

const sitesRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/sites',
  validateSearch: (s: Record<string, unknown>): { site?: string; q?: string } => ({ site: str(s.site), q: str(s.q) }),
  component: lazyRouteComponent(() => import('./views/Sites'), 'Sites'),
});

const rackRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/racks/$rackId',
  validateSearch: (s: Record<string, unknown>): { axis?: Axis } => ({
    axis: axes.find((a) => a === s.axis),
  }),
  component: lazyRouteComponent(() => import('./views/RackElevation'), 'RackElevation'),
});

const devicesRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/devices',
  validateSearch: (s: Record<string, unknown>): DeviceSearch => ({
    site: str(s.site),
    rack: str(s.rack),
    role: str(s.role),
    power: str(s.power),
    lifecycle: str(s.lifecycle),
    q: str(s.q),
  }),
  component: lazyRouteComponent(() => import('./views/Devices'), 'Devices'),
});

const deviceRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/devices/$deviceId',
  component: lazyRouteComponent(() => import('./views/DeviceDetail'), 'DeviceDetail'),
});

const jobsRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/jobs',
  validateSearch: (s: Record<string, unknown>): JobSearch => ({
    state: str(s.state),
    kind: str(s.kind),
    site: str(s.site),
  }),
  component: lazyRouteComponent(() => import('./views/Jobs'), 'Jobs'),
});

const jobRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/jobs/$jobId',
  component: lazyRouteComponent(() => import('./views/JobDetail'), 'JobDetail'),
});

const firmwareRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/firmware',
  component: lazyRouteComponent(() => import('./views/Firmware'), 'Firmware'),
});

const packageRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/firmware/packages/$packageId',
  component: lazyRouteComponent(() => import('./views/PackageDetail'), 'PackageDetail'),
});

const campaignsRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/campaigns',
  component: lazyRouteComponent(() => import('./views/Campaigns'), 'Campaigns'),
});

const campaignRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/campaigns/$campaignId',
  component: lazyRouteComponent(() => import('./views/CampaignDetail'), 'CampaignDetail'),
});

const auditRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/audit',
  validateSearch: (s: Record<string, unknown>): AuditSearch => ({
    actor: text(s.actor),
    action: text(s.action),
    target: text(s.target),
    since: instant(s.since),
    until: instant(s.until),
  }),
  component: lazyRouteComponent(() => import('./views/Audit'), 'Audit'),
});

const rmaRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/rma',
  validateSearch: (s: Record<string, unknown>): RmaSearch => ({
    state: str(s.state),
    site: text(s.site),
    device: str(s.device),
  }),
  component: lazyRouteComponent(() => import('./views/Rma'), 'Rma'),
});

const rmaCaseRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/rma/$caseId',
  component: lazyRouteComponent(() => import('./views/RmaDetail'), 'RmaDetail'),
});

const slaRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/sla',
  validateSearch: (s: Record<string, unknown>): SlaSearch => ({
    status: str(s.status),
    type: str(s.type),
    site: text(s.site),
    object: str(s.object),
  }),
  component: lazyRouteComponent(() => import('./views/SlaBreaches'), 'SlaBreaches'),
});

const facilityRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/facility',
  validateSearch: (s: Record<string, unknown>): FacilitySearch => ({
    state: str(s.state),
    kind: str(s.kind),
    severity: str(s.severity),
  }),
  component: lazyRouteComponent(() => import('./views/FacilityEvents'), 'FacilityEvents'),
});

const routeTree = rootRoute.addChildren([
  overviewRoute,
  sitesRoute,
  rackRoute,
  devicesRoute,
  deviceRoute,
  jobsRoute,
  jobRoute,
  firmwareRoute,
  packageRoute,
  campaignsRoute,
  campaignRoute,
  rmaRoute,
  rmaCaseRoute,
  slaRoute,
  facilityRoute,
  auditRoute,
]);

export const router = createRouter({ routeTree, defaultPreload: 'intent' });

declare module '@tanstack/react-router' {
  interface Register {
    router: typeof router;
  }
}

import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export function createSyncMetrics(registry: Registry, lastSuccess: () => Date | undefined) {
  return {
    objects: new Counter({
      name: 'fleet_netbox_objects_synced_total',
      help: 'NetBox objects written to the mirror',
      labelNames: ['kind', 'mode'],
      registers: [registry],
    }),
    deletions: new Counter({
      name: 'fleet_netbox_objects_deleted_total',
      help: 'Mirror objects removed because NetBox deleted them',
      labelNames: ['kind'],
      registers: [registry],
    }),
    errors: new Counter({
      name: 'fleet_netbox_sync_errors_total',
      help: 'Failed syncs by reason',
      labelNames: ['reason'],
      registers: [registry],
    }),
    requests: new Counter({
      name: 'fleet_netbox_requests_total',
      help: 'Requests made to NetBox',
      labelNames: ['mode'],
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'fleet_netbox_sync_seconds',
      help: 'Sync duration',
      labelNames: ['mode'],
      buckets: [0.05, 0.1, 0.5, 1, 5, 15, 60, 300],
      registers: [registry],
    }),
    openIssues: new Gauge({
      name: 'fleet_netbox_open_inventory_issues',
      help: 'Open inventory issues',
      registers: [registry],
    }),
    lag: new Gauge({
      name: 'fleet_netbox_sync_lag_seconds',
      help: 'Seconds since the last successful sync',
      registers: [registry],
      collect() {
        const at = lastSuccess();
        this.set(at ? (Date.now() - at.getTime()) / 1000 : Number.POSITIVE_INFINITY);
      },
    }),
  };
}
export type SyncMetrics = ReturnType<typeof createSyncMetrics>;

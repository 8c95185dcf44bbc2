import { sql } from 'drizzle-orm';
import {
  bigserial,
  boolean,
  check,
  index,
  integer,
  jsonb,
  numeric,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { fleetLifecycleStates, initialLifecycleState, type FleetLifecycleState } from '@fleet/domain';
import { createdAt, sqlList, tsz, updatedAt } from './_columns.js';

/**
 * Inventory mirrors NetBox (the source of truth): every synced row keeps its NetBox id
 * (its only key: names are unique only where NetBox makes them so, which the mirror leaves
 * to NetBox), NetBox's last_updated, and when we last saw it. Devices registered through
 * the API (no NetBox id) live beside synced ones.
 */
const provenance = () => ({
  netboxId: integer('netbox_id').unique(),
  netboxLastUpdated: tsz('netbox_last_updated'),
  lastSyncedAt: tsz('last_synced_at'),
});

export const sites = pgTable('sites', {
  /**
   * A lower-case DNS label (`isSiteId`): NetBox's site slug when the site was first mirrored, kept when the slug is
   * renamed later, because the satellite task queue is `site-<id>` and jobs refer to it (docs/inventory.md).
   */
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  status: text('status'),
  ...provenance(),
  /** Set when the site disappeared from NetBox; kept because jobs and audit refer to it. */
  deletedAt: tsz('deleted_at'),
  /**
   * Set by DELETE /v1/sites/{id}: the site takes no new jobs, and is removed once its running jobs have finished
   * (docs/deployment.md, "Sites").
   */
  drainingSince: tsz('draining_since'),
  /** Who asked for the removal. */
  drainedBy: text('drained_by'),
  /** Set when a drained site had no running jobs left: gone from lists, kept because jobs and audit refer to it. */
  removedAt: tsz('removed_at'),
  createdAt: createdAt(),
});

/**
 * What the workflow agent last learnt from Temporal about a site's satellite (docs/deployment.md, "Sites"): the
 * pollers of the task queue `site-<id>` and the newest time one of them polled. One row per site, all written by one
 * statement per check.
 */
export const siteSatellites = pgTable('site_satellites', {
  siteId: text('site_id')
    .primaryKey()
    .references(() => sites.id),
  /** Distinct pollers (worker identities) Temporal lists on the workflow and activity queues. */
  pollers: integer('pollers').notNull(),
  /** The newest poll of any of them; null when Temporal lists none. */
  lastSeenAt: tsz('last_seen_at'),
  /** When the agent asked Temporal: an old value means no agent checks, so the status is unknown. */
  checkedAt: tsz('checked_at').notNull(),
});

export const racks = pgTable(
  'racks',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id),
    name: text('name').notNull(),
    /** gb200_nvl72 | gb300_nvl72 | vr_nvl72, from the NetBox rack type; null if unknown. */
    rackType: text('rack_type'),
    status: text('status'),
    uHeight: integer('u_height').notNull().default(48),
    serial: text('serial'),
    ...provenance(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  // No unique name per site: NetBox makes rack names unique per location, not per site.
  (t) => [index('racks_site_id_idx').on(t.siteId)],
);

export const devices = pgTable(
  'devices',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /**
     * Unique within a site among live devices registered through the API; NetBox's names are unique only per site
     * and tenant, and a deleted device's name may be reused, so synced devices are keyed by NetBox id alone.
     */
    name: text('name').notNull(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id),
    rackId: uuid('rack_id').references(() => racks.id, { onDelete: 'set null' }),
    /** Lowest U the device occupies; null when not racked. */
    position: numeric('position', { mode: 'number' }),
    face: text('face'),
    uHeight: numeric('u_height', { mode: 'number' }),
    role: text('role'),
    vendor: text('vendor'),
    model: text('model'),
    platform: text('platform'),
    serial: text('serial'),
    /**
     * NetBox device status (active, planned, staged, failed, offline, ...); unknown values kept as-is. The inventory
     * axis, written by the NetBox agent; Fleet's own lifecycle is fleet_lifecycle (docs/lifecycle.md).
     */
    lifecycleState: text('lifecycle_state').notNull().default('active'),
    /** Fleet's lifecycle (docs/lifecycle.md); only setLifecycle writes it, under the transition table. */
    fleetLifecycle: text('fleet_lifecycle').$type<FleetLifecycleState>().notNull().default(initialLifecycleState),
    /** RMS node type; null when the inventory descriptor matches no driver. */
    nodeType: text('node_type'),
    managementProfile: text('management_profile'),
    /** Null when the inventory gives no BMC address: such a device cannot be operated. */
    bmcUrl: text('bmc_url'),
    /** A reference the site's satellite resolves in its own secret store; never a secret. */
    credentialRef: text('credential_ref'),
    /** Switch trays: NVOS's NVUE REST base URL (https://10.0.0.5; http://127.x.y.z:port for simulators). */
    nvosUrl: text('nvos_url'),
    /** Switch trays: NVOS SSH/SFTP endpoint as `host:port`. */
    nvosSsh: text('nvos_ssh'),
    /** Switch trays: the NVOS login's secret-store reference, when it is not credential_ref. */
    nvosCredentialRef: text('nvos_credential_ref'),
    /** Switch trays: pinned SSH host key (`SHA256:<base64>`); without it the satellite trusts the first key seen. */
    nvosHostKey: text('nvos_host_key'),
    /**
     * The Redfish ComputerSystem id that is this device, on BMCs that manage several (custom field
     * fleet_redfish_system_id).
     */
    redfishSystemId: text('redfish_system_id'),
    firmwareVersion: text('firmware_version'),
    powerState: text('power_state').notNull().default('Unknown'),
    powerStateAt: tsz('power_state_at'),
    /** NetBox id of the device's out-of-band (BMC) IP address, when NetBox names one. */
    oobIpNetboxId: integer('oob_ip_netbox_id'),
    ...provenance(),
    /** Set when the device disappeared from NetBox; kept because jobs and audit refer to it. */
    deletedAt: tsz('deleted_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('devices_registered_site_id_name_unique')
      .on(t.siteId, t.name)
      .where(sql`${t.netboxId} is null and ${t.deletedAt} is null`),
    // A site's devices in name order (the console's and fleetctl's default page) read straight off an index, with
    // or without a role filter; both also serve plain site lookups.
    index('devices_site_id_name_id_idx').on(t.siteId, t.name, t.id),
    index('devices_site_id_role_name_id_idx').on(t.siteId, t.role, t.name, t.id),
    index('devices_rack_id_idx').on(t.rackId),
    index('devices_role_idx').on(t.role),
    index('devices_vendor_idx').on(t.vendor),
    // The devices naming a changed address as their OOB IP, found by an incremental sync.
    index('devices_oob_ip_netbox_id_idx').on(t.oobIpNetboxId),
    index('devices_model_idx').on(t.model),
    index('devices_node_type_idx').on(t.nodeType),
    index('devices_lifecycle_state_idx').on(t.lifecycleState),
    index('devices_fleet_lifecycle_idx').on(t.fleetLifecycle),
    check('devices_fleet_lifecycle_check', sql`${t.fleetLifecycle} in ${sqlList(fleetLifecycleStates)}`),
    index('devices_power_state_idx').on(t.powerState),
    index('devices_firmware_version_idx').on(t.firmwareVersion),
    index('devices_created_at_id_idx').on(t.createdAt, t.id),
    index('devices_name_id_idx').on(t.name, t.id),
  ],
);

export const interfaces = pgTable(
  'interfaces',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    deviceId: uuid('device_id')
      .notNull()
      .references(() => devices.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    type: text('type'),
    macAddress: text('mac_address'),
    mgmtOnly: boolean('mgmt_only').notNull().default(false),
    enabled: boolean('enabled').notNull().default(true),
    ...provenance(),
  },
  (t) => [index('interfaces_device_id_idx').on(t.deviceId)],
);

export const ipAddresses = pgTable(
  'ip_addresses',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /** CIDR as NetBox writes it, e.g. 10.1.2.3/24. */
    address: text('address').notNull(),
    status: text('status'),
    dnsName: text('dns_name'),
    interfaceId: uuid('interface_id').references(() => interfaces.id, { onDelete: 'set null' }),
    deviceId: uuid('device_id').references(() => devices.id, { onDelete: 'set null' }),
    ...provenance(),
  },
  (t) => [
    index('ip_addresses_interface_id_idx').on(t.interfaceId),
    index('ip_addresses_device_id_idx').on(t.deviceId),
    index('ip_addresses_address_idx').on(t.address),
    // The same host address under any prefix length: duplicate BMC addresses, looked up per device.
    index('ip_addresses_host_idx').on(sql`split_part(${t.address}, '/', 1)`),
  ],
);

/**
 * Real-world data that a sync could not use as-is (no BMC address, unknown type, an
 * IP on two devices...). The sync goes on; the API shows these until they are fixed.
 */
export const inventoryIssues = pgTable(
  'inventory_issues',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    /** e.g. dcim.device */
    objectType: text('object_type').notNull(),
    netboxId: integer('netbox_id').notNull(),
    deviceId: uuid('device_id').references(() => devices.id, { onDelete: 'cascade' }),
    code: text('code').notNull(),
    message: text('message').notNull(),
    firstSeenAt: timestamp('first_seen_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    lastSeenAt: timestamp('last_seen_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    resolvedAt: tsz('resolved_at'),
  },
  (t) => [
    uniqueIndex('inventory_issues_open_unique')
      .on(t.objectType, t.netboxId, t.code)
      .where(sql`${t.resolvedAt} is null`),
    index('inventory_issues_device_id_idx').on(t.deviceId),
  ],
);

/** One row per sync scope (e.g. `netbox`): watermarks, health and staleness. */
export const syncState = pgTable('sync_state', {
  scope: text('scope').primaryKey(),
  /** Highest NetBox last_updated applied; incremental syncs start a little before it. */
  watermark: tsz('watermark'),
  /** Time up to which the NetBox change log (deletions) has been applied. */
  changeWatermark: tsz('change_watermark'),
  lastFullSyncAt: tsz('last_full_sync_at'),
  lastSuccessAt: tsz('last_success_at'),
  lastAttemptAt: tsz('last_attempt_at'),
  lastError: text('last_error'),
  stale: boolean('stale').notNull().default(true),
  sourceUrl: text('source_url'),
  counts: jsonb('counts').$type<Record<string, number>>(),
});

export type Site = typeof sites.$inferSelect;
export type SiteSatellite = typeof siteSatellites.$inferSelect;
export type Rack = typeof racks.$inferSelect;
export type Device = typeof devices.$inferSelect;
export type NewDevice = typeof devices.$inferInsert;
export type Interface = typeof interfaces.$inferSelect;
export type IpAddress = typeof ipAddresses.$inferSelect;
export type InventoryIssue = typeof inventoryIssues.$inferSelect;
export type SyncState = typeof syncState.$inferSelect;

import { index, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt, tsz, updatedAt } from './_columns.js';

export const sites = pgTable('sites', {
  /** Short stable slug; the satellite task queue is `site-<id>`. */
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  createdAt: createdAt(),
});

export const devices = pgTable(
  'devices',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    name: text('name').notNull().unique(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id),
    nodeType: text('node_type').notNull(),
    bmcUrl: text('bmc_url').notNull(),
    /** A reference the site's satellite resolves in its own secret store; never a secret. */
    credentialRef: text('credential_ref').notNull(),
    powerState: text('power_state').notNull().default('Unknown'),
    powerStateAt: tsz('power_state_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('devices_site_id_idx').on(t.siteId)],
);

export type Site = typeof sites.$inferSelect;
export type Device = typeof devices.$inferSelect;
export type NewDevice = typeof devices.$inferInsert;

export * from './client.js';
export * from './migrate.js';
export * from './schema/index.js';
export * from './repos/inventory.repo.js';
export * from './repos/jobs.repo.js';
export * from './repos/security.repo.js';
export * from './repos/netbox-sync.repo.js';
export * from './repos/parent-jobs.repo.js';

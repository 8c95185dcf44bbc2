// What other workspace code (benches, end-to-end tests) may use of the NetBox agent; main.ts is the process.
export { NetboxAgentConfig, netboxAgentShutdownGraceS } from './config.js';
export { createSyncMetrics, type SyncMetrics } from './metrics.js';
export { NetboxClient, NetboxError } from './netbox-client.js';
export { NetboxSync, type SyncDeps, type SyncResult } from './sync.js';

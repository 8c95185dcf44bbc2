// What other workspace code (benches, the test runner) may use of the satellite; main.ts is the process.
export { ArtifactCache, type ArtifactCacheOptions, type HubSource } from './artifacts/artifact-cache.js';
export { buildWorkflowBundle } from './build-workflow-bundle.js';
export { SatelliteConfig, satelliteShutdownGraceS } from './config.js';

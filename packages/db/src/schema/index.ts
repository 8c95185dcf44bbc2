export * from './inventory.js';
export * from './jobs.js';
export * from './security.js';
export * from './firmware.js';
export * from './events.js';
export * from './lifecycle.js';
export * from './health.js';

export * from './load-config.js';
export * from './schemas.js';
export * from './logger.js';
export * from './metrics-server.js';
export * from './shutdown.js';
export * from './cli.js';
export * from './temporal-tls.js';
export * from './repository-path.js';

export * from './timing.js';
export * from './tls.js';
export * from './transport.js';

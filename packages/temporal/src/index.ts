export * from './search-attributes.js';
export * from './dev-server.js';

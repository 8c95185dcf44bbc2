export * from './search-attributes.js';
export * from './dev-server.js';
export * from './data-converter.js';

/** What code outside the hub (tests, tools) may use: its config schema, the app and its OpenAPI document. */
export { HubConfig, twoPersonRules } from './config.js';
export { buildHub, type HubDeps } from './app.js';
export { openapiDocument } from './openapi.js';

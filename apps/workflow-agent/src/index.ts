/** What code outside the workflow agent (tests, tools) may use. */
export { AgentConfig } from './config.js';

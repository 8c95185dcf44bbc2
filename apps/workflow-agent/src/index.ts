/** What code outside the workflow agent (tests, tools) may use. */
export { AgentConfig, agentShutdownGraceS } from './config.js';

export { AGENT_LEASE_MS, createAgentSweeper } from "./agent/connections.js";
export { createInterview } from "./compose.js";
export { interviewRetention } from "./db/retention.js";
export type { Deps as InterviewDeps } from "./deps.js";
export { createRealtime, type Realtime } from "./realtime.js";
export { interviewService, migrations, SCHEMA } from "./server.js";

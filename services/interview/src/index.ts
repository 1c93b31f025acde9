export { createControlClients, createPlatformClients } from "./clients.js";
export type { Deps as InterviewDeps } from "./deps.js";
export { interviewService, migrations, SCHEMA } from "./server.js";

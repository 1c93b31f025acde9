export { createAuditConsumer } from "./audit-consumer.js";
export { createBackgroundTasks } from "./background.js";
export { createControl } from "./compose.js";
export { controlRetention } from "./db/retention.js";
export type { Deps as ControlDeps } from "./deps.js";
export { createMailer } from "./mailer.js";
export { controlService, migrations, SCHEMA } from "./server.js";

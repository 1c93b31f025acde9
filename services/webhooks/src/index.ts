export { createWebhooks } from "./compose.js";
export { webhooksRetention } from "./db/retention.js";
export type { Deps as WebhooksDeps } from "./deps.js";
export { createEnvironmentIdCheck } from "./environment-id-check.js";
export { createSecretSealer, resealSecrets, type SecretSealer } from "./sealed-secrets.js";
export { migrations, SCHEMA, webhooksService } from "./server.js";
export { createWebhookWorkers, type WebhookWorkers } from "./workers.js";

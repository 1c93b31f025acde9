export { createPlatform } from "./compose.js";
export { createControlClients, createDeliveryClient } from "./control-clients.js";
export { platformRetention } from "./db/retention.js";
export type { Deps as PlatformDeps } from "./deps.js";
export { migrations, platformService, SCHEMA } from "./server.js";

export { createPlatform } from "./compose.js";
export { platformRetention } from "./db/retention.js";
export type { Deps as PlatformDeps } from "./deps.js";
export { migrations, platformService, SCHEMA } from "./server.js";

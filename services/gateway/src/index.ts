export { buildApp, type GatewayDeps } from "./app.js";
export { createGateway, type GatewayProcess } from "./compose.js";
export { describeApi } from "./describe.js";
export { idempotencyId, operatorScope } from "./idempotency/keys.js";
export { idempotencyRecords } from "./idempotency/records.js";
export { createRedis } from "./redis.js";
export { createUpstreams, type Upstreams } from "./upstream.js";

export { idempotencyId, operatorScope, type RedisKeys, redisKeys } from "./admission/round-trip.js";
export { buildApp, type GatewayDeps } from "./app.js";
export { createGateway, type GatewayProcess } from "./compose.js";
export { describeApi } from "./describe.js";
export { idempotencyRecords } from "./idempotency/records.js";
export { createRedis, type RedisClient } from "./redis.js";
export { createUpstreams, type Upstreams } from "./upstream.js";

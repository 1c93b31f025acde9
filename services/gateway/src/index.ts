export { buildApp, type GatewayDeps } from "./app.js";
export { createGateway, type GatewayProcess } from "./compose.js";
export { describeApi } from "./describe.js";
export { idempotencyId, operatorScope } from "./idempotency/keys.js";
export { idempotencyRecords } from "./idempotency/records.js";
export { createRedis, type RedisClient } from "./redis.js";
export { type RedisKeys, redisKeys } from "./redis-keys.js";
export { createUpstreams, type Upstreams } from "./upstream.js";

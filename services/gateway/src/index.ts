export { buildApp, type GatewayDeps } from "./app.js";
export { createRedis } from "./redis.js";
export { createUpstreams, type Upstreams } from "./upstream.js";
export { idempotencyId } from "./plugins/idempotency.js";

export { type ClientOptions, createClient, type EvalpClient } from "./client.js";
export { EvalpApiError, type Unwrapped, unwrap } from "./errors.js";
export type { PagedPath, PageInit, PageItem } from "./paginate.js";
export { parseRetryAfter, type RetryOptions } from "./retry.js";
export type { Fetch } from "./transport.js";
export type {
  components,
  ErrorCode,
  operations,
  paths,
  Schemas,
  ValidationProblem,
  WebhookEvent,
  WebhookEventType,
  webhooks,
} from "./types.js";
export { verifyWebhook, type WebhookHeaders, WebhookVerificationError } from "./webhooks.js";

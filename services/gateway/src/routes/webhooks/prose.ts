import { type Plane, type Prose, plane } from "../route.js";

/** The webhooks plane's operations, by operationId: each is one route of the plane. */
export type WebhooksOperationId =
  | "createWebhookEndpoint"
  | "listWebhookEndpoints"
  | "getWebhookEndpoint"
  | "updateWebhookEndpoint"
  | "deleteWebhookEndpoint"
  | "rotateWebhookSecret"
  | "testWebhookEndpoint"
  | "recoverWebhookDeliveries"
  | "listWebhookDeliveries"
  | "getWebhookDelivery"
  | "replayWebhookDelivery";

/**
 * What `/openapi.json` says of each of the webhooks plane's operations: its summary, its
 * description and what each success status means. The routes beside this file declare the rest;
 * the compiler holds the two together (an operation without its prose, or prose without its
 * operation, does not build).
 */
export const WEBHOOKS_PROSE = {
  createWebhookEndpoint: {
    summary: "Create a webhook endpoint",
    description:
      "Registers an endpoint for the environment's events of `event_types` (`*`: all). Its signing `secret` (`whsec_` and base64 of 24 to 64 bytes) is generated when not given and shown in this answer only. A private or non-HTTPS target is refused item by item (422); past the `webhook_endpoints` quota, 409 `quota_exceeded`. Requires `webhooks:write` and an Idempotency-Key.",
    responses: { 201: "The endpoint, created, with its secret." },
  },
  listWebhookEndpoints: {
    summary: "List webhook endpoints",
    description:
      "The environment's endpoints, newest first, a page at a time (docs/paging.md), never with their secrets. Requires `webhooks:read`.",
    responses: { 200: "A page of endpoints." },
  },
  getWebhookEndpoint: {
    summary: "Get a webhook endpoint",
    description: "One endpoint of the environment, without its secret. Requires `webhooks:read`.",
    responses: { 200: "The endpoint." },
  },
  updateWebhookEndpoint: {
    summary: "Change a webhook endpoint",
    description:
      "Changes the fields given. Disabling sets `disabled_at` and dead-letters the endpoint's waiting deliveries; enabling clears it. A refused target is 422, item by item. Requires `webhooks:write` and an Idempotency-Key.",
    responses: { 200: "The endpoint, changed." },
  },
  deleteWebhookEndpoint: {
    summary: "Delete a webhook endpoint",
    description:
      "Deletes the endpoint: it is sent nothing more and no longer counts against `webhook_endpoints`. Requires `webhooks:write` and an Idempotency-Key.",
    responses: { 204: "The endpoint, deleted." },
  },
  rotateWebhookSecret: {
    summary: "Rotate a webhook secret",
    description:
      "Gives the endpoint a new secret, shown in this answer only; for 24 hours deliveries are signed with the previous one too, so a receiver can switch. Requires `webhooks:write` and an Idempotency-Key.",
    responses: { 200: "The endpoint with its new secret." },
  },
  testWebhookEndpoint: {
    summary: "Send a test event",
    description:
      "Delivers a `webhook.test` event to this endpoint alone, attempted at once. Requires `webhooks:write` and an Idempotency-Key.",
    responses: { 200: "The test event's delivery." },
  },
  recoverWebhookDeliveries: {
    summary: "Recover failed deliveries",
    description:
      "Re-queues the endpoint's `failed` and `dead_letter` deliveries created since `since`; with `dry_run`, only counts them. Requires `webhooks:write` and an Idempotency-Key.",
    responses: { 200: "How many deliveries were (or would be) re-queued." },
  },
  listWebhookDeliveries: {
    summary: "List webhook deliveries",
    description:
      "The environment's deliveries, newest first, a page at a time (docs/paging.md), optionally only those of one `status` or one `endpoint_id`. Requires `webhooks:read`.",
    responses: { 200: "A page of deliveries." },
  },
  getWebhookDelivery: {
    summary: "Get a webhook delivery",
    description: "One delivery of the environment with every attempt made. Requires `webhooks:read`.",
    responses: { 200: "The delivery and its attempts." },
  },
  replayWebhookDelivery: {
    summary: "Replay a webhook delivery",
    description:
      "Sets the delivery, whatever its status, `pending` again and attempts it at once; `attempt_count` keeps counting. Requires `webhooks:write` and an Idempotency-Key.",
    responses: { 200: "The delivery, pending again." },
  },
} satisfies Record<WebhooksOperationId, Prose>;

/** The webhooks plane's tag, and its operations' prose (above). */
export const WEBHOOKS: Plane<WebhooksOperationId> = plane("webhooks", WEBHOOKS_PROSE);

import { ConnectError } from "@connectrpc/connect";
import { fromConnectError } from "@evalp/kit";
import type { Attempt, Delivery } from "@evalp/proto/webhooks/v1/delivery";
import type { Endpoint } from "@evalp/proto/webhooks/v1/endpoint";
import { Type } from "@sinclair/typebox";
import { iso } from "../../http/timestamps.js";
import { RequestValidationError } from "../../validation/json-body.js";
import type { PydanticItem } from "../../validation/pydantic-errors.js";
import { DateTime, Uuid } from "../schemas.js";

export const ENV = "/v1/organizations/:organization_id/apps/:app_id/environments/:environment_id";

/** The event types of contract §6, and `*` for all of them. */
export const EVENT_TYPES = [
  "*",
  "subject.imported",
  "continuous_answer.recorded",
  "bundle.status_changed",
  "quota.updated",
  "membership.created",
  "invitation.accepted",
  "interview.started",
  "interview.completed",
  "interview.agent_requested",
  "webhook.test",
  "webhook.endpoint_disabled",
] as const;

export const DELIVERY_STATUSES = ["pending", "succeeded", "failed", "dead_letter"] as const;

/** Optional response fields are absent rather than null (interface part 2 marks them `(o)`). */
export const WebhookEndpoint = Type.Object(
  {
    id: Uuid,
    environment_id: Uuid,
    url: Type.String(),
    enabled: Type.Boolean(),
    event_types: Type.Array(Type.String()),
    created_at: DateTime,
    disabled_at: Type.Optional(DateTime),
  },
  { title: "WebhookEndpoint" },
);

export const WebhookEndpointWithSecret = Type.Composite(
  [WebhookEndpoint, Type.Object({ secret: Type.String() })],
  {
    title: "WebhookEndpointWithSecret",
  },
);

const DeliveryFields = {
  id: Uuid,
  endpoint_id: Uuid,
  event_id: Uuid,
  event_type: Type.String(),
  status: Type.String(),
  attempt_count: Type.Integer(),
  created_at: DateTime,
  delivered_at: Type.Optional(DateTime),
  last_error: Type.Optional(Type.String()),
  next_attempt_at: Type.Optional(DateTime),
  response_status: Type.Optional(Type.Integer()),
};

export const WebhookDelivery = Type.Object(DeliveryFields, { title: "WebhookDelivery" });

export const WebhookDeliveryWithAttempts = Type.Object(
  {
    ...DeliveryFields,
    attempts: Type.Array(
      Type.Object({
        attempted_at: DateTime,
        response_status: Type.Optional(Type.Integer()),
        error: Type.Optional(Type.String()),
        duration_ms: Type.Integer(),
      }),
    ),
  },
  { title: "WebhookDeliveryWithAttempts" },
);

export function endpointJson(endpoint: Endpoint | undefined) {
  if (!endpoint) throw new Error("upstream returned no webhook endpoint");
  return {
    id: endpoint.id,
    environment_id: endpoint.environmentId,
    url: endpoint.url,
    enabled: endpoint.enabled,
    event_types: endpoint.eventTypes,
    created_at: iso(endpoint.createdAt),
    ...(endpoint.disabledAt && { disabled_at: iso(endpoint.disabledAt) }),
  };
}

export function deliveryJson(delivery: Delivery | undefined) {
  if (!delivery) throw new Error("upstream returned no webhook delivery");
  return {
    id: delivery.id,
    endpoint_id: delivery.endpointId,
    event_id: delivery.eventId,
    event_type: delivery.eventType,
    status: delivery.status,
    attempt_count: delivery.attemptCount,
    created_at: iso(delivery.createdAt),
    ...(delivery.deliveredAt && { delivered_at: iso(delivery.deliveredAt) }),
    ...(delivery.lastError !== undefined && { last_error: delivery.lastError }),
    ...(delivery.nextAttemptAt && { next_attempt_at: iso(delivery.nextAttemptAt) }),
    ...(delivery.responseStatus !== undefined && { response_status: delivery.responseStatus }),
  };
}

export function attemptJson(attempt: Attempt) {
  return {
    attempted_at: iso(attempt.attemptedAt),
    ...(attempt.responseStatus !== undefined && { response_status: attempt.responseStatus }),
    ...(attempt.error !== undefined && { error: attempt.error }),
    duration_ms: attempt.durationMs,
  };
}

/**
 * Awaits an upstream call, turning the service's refusal of a field (a `validation_error` whose
 * context holds the Pydantic-shaped `detail`: a private target, a malformed secret) into the
 * contract's 422 validation body.
 */
export async function refusingFields<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof ConnectError) {
      const app = fromConnectError(error);
      if (app.code === "validation_error" && Array.isArray(app.context.detail)) {
        throw new RequestValidationError(app.context.detail as PydanticItem[]);
      }
    }
    throw error;
  }
}

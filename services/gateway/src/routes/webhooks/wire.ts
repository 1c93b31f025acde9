import type { Delivery } from "@evalp/proto/webhooks/v1/delivery";
import type { Endpoint } from "@evalp/proto/webhooks/v1/endpoint";
import { Type } from "@sinclair/typebox";
import { StringEnum } from "../../validation/request-validator.js";
import { DateTime, type EnvPath, environmentRef, named, ref, Uuid, wireOf } from "../wire.js";

// The webhooks plane's resources on the wire: their schemas (named components of the document) and
// the mappers from the RPC messages. Optional fields are absent rather than null (interface `(o)`).

/** The event types of docs/webhooks.md, and `*` for all of them. */
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
  "evaluation.scored",
  "webhook.test",
  "webhook.endpoint_disabled",
  "subject.erasure_requested",
  "subject.erased",
] as const;

export const DELIVERY_STATUSES = ["pending", "succeeded", "failed", "dead_letter"] as const;

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
  named(
    "WebhookEndpoint",
    "Where an environment's events of the chosen types are delivered (never with its secret).",
  ),
);

export const WebhookEndpointCreated = Type.Object(
  { ...WebhookEndpoint.properties, secret: Type.String() },
  named(
    "WebhookEndpointCreated",
    "An endpoint with its signing secret (`whsec_…`), shown only when it is created and when the " +
      "secret is rotated.",
  ),
);

export const endpointJson = wireOf(WebhookEndpoint);

/** An endpoint and the secret its answer carries (creation, rotation). */
export function endpointWithSecretJson(answer: { endpoint?: Endpoint | undefined; secret: string }) {
  return { ...endpointJson(answer.endpoint), secret: answer.secret };
}

const DeliveryFields = {
  id: Uuid,
  endpoint_id: Uuid,
  event_id: Uuid,
  event_type: Type.String(),
  // Typed as the string the RPC answers; the enum says what it can be.
  status: Type.Unsafe<string>(StringEnum(DELIVERY_STATUSES)),
  attempt_count: Type.Integer(),
  created_at: DateTime,
  delivered_at: Type.Optional(DateTime),
  last_error: Type.Optional(Type.String()),
  next_attempt_at: Type.Optional(DateTime),
  response_status: Type.Optional(Type.Integer()),
};

export const WebhookDelivery = Type.Object(
  DeliveryFields,
  named("WebhookDelivery", "One event's delivery to one endpoint, and where its attempts stand."),
);

export const WebhookDeliveryAttempt = Type.Object(
  {
    attempted_at: DateTime,
    response_status: Type.Optional(Type.Integer()),
    error: Type.Optional(Type.String()),
    duration_ms: Type.Integer(),
  },
  named(
    "WebhookDeliveryAttempt",
    "One attempt of a delivery: the receiver's status, or the error that stood for it.",
  ),
);

export const WebhookDeliveryWithAttempts = Type.Object(
  { ...DeliveryFields, attempts: Type.Array(ref(WebhookDeliveryAttempt)) },
  named("WebhookDeliveryWithAttempts", "A delivery with every attempt made, oldest first."),
);

export const deliveryJson = wireOf(WebhookDelivery);

const attemptJson = wireOf(WebhookDeliveryAttempt);

export function deliveryWithAttemptsJson(delivery: Delivery | undefined) {
  return { ...deliveryJson(delivery), attempts: (delivery?.attempts ?? []).map(attemptJson) };
}

export const WebhookRecovery = Type.Object(
  { count: Type.Integer({ description: "The deliveries re-queued (or that would be, on a dry run)." }) },
  named("WebhookRecovery", "What a recovery re-queued."),
);

/** The named schemas of this plane, registered once with the app (components of the document). */
export const WEBHOOK_SCHEMAS = [
  WebhookEndpoint,
  WebhookEndpointCreated,
  WebhookDelivery,
  WebhookDeliveryAttempt,
  WebhookDeliveryWithAttempts,
  WebhookRecovery,
];

// What the webhooks plane's requests carry: the resources a path names, as its RPCs take them.

/** The endpoint a path names, as every endpoint RPC takes it. */
export function endpointRef(params: EnvPath & { id: string }) {
  return { environment: environmentRef(params), endpointId: params.id };
}

/** The delivery a path names, as the delivery RPCs take it. */
export function deliveryRef(params: EnvPath & { delivery_id: string }) {
  return { environment: environmentRef(params), deliveryId: params.delivery_id };
}

import { QUOTA_COUNTERS, ROLES } from "@evalp/kit";
import { type TObject, type TProperties, Type } from "@sinclair/typebox";
import { MEMBERSHIP_STATUSES } from "../routes/control/wire.js";
import { REPORT_FIELDS } from "../routes/interview/resources.js";
import { BUNDLE_STATUSES } from "../routes/platform/wire.js";
import { DateTime, Uuid } from "../routes/schemas.js";
import type { EVENT_TYPES } from "../routes/webhooks/wire.js";
import { nullable } from "../routes/wire.js";
import { StringEnum } from "../validation/request-validator.js";

/** An event type a webhook endpoint can subscribe to (docs/webhooks.md, docs/interview.md#the-agent-protocol); `*` is not one. */
export type EventType = Exclude<(typeof EVENT_TYPES)[number], "*">;

/** One entry of the catalog: the body's named schema and what the document says of the event. */
export type CatalogEntry = {
  schema: TObject;
  summary: string;
  description: string;
};

/**
 * The body of one event type as the webhooks plane sends it (`eventBody`): the envelope's five
 * fields, in that order, with this type's `data`. The schemas are open: a field may be added to
 * the envelope or to `data` within `/v1` (docs/versioning.md), so a consumer generated from the
 * document must accept one. Every emitter writes its `data` from one literal object, and the API
 * tests check every delivered body strictly (no field the document does not name), so a field
 * added there must still be added here.
 */
function eventBody(type: EventType, name: string, data: TProperties, description: string): TObject {
  return Type.Object(
    {
      id: Type.String({
        format: "uuid",
        description: "The event's id, also sent as `webhook-id`: deduplicate on it.",
      }),
      type: Type.Literal(type),
      timestamp: Type.String({ format: "date-time", description: "When the change was committed." }),
      environment_id: Type.String({ format: "uuid", description: "The environment the event belongs to." }),
      data: Type.Object(data),
    },
    { $id: name, title: name, description },
  );
}

/** `quota.updated`'s `limits`: the seven counters, each set by the client (0-1,000,000,000). */
const Limits = Type.Object(
  Object.fromEntries(
    QUOTA_COUNTERS.map((name) => [name, Type.Integer({ minimum: 0, maximum: 1_000_000_000 })]),
  ),
);

const BundleStatus = StringEnum(BUNDLE_STATUSES);
const Role = StringEnum(ROLES);

/** What both interview events say about the interview (the interview plane's `eventBase`). */
const InterviewBase = {
  evaluation_id: Uuid,
  interview_id: Uuid,
  subject_id: Uuid,
  program_id: nullable(Uuid),
  bundle_id: Uuid,
  config_fingerprint: Type.String({ description: "The fingerprint of the bundle configuration it runs." }),
};

/**
 * Every event the platform delivers, by type: the payload its emitter writes (services/<plane>
 * `writeOutboxEvent`, or the webhooks plane itself for `webhook.test`). The document's `webhooks`
 * are generated from it, and the API tests check every delivered body against the document.
 */
export const EVENT_CATALOG = {
  "subject.imported": {
    summary: "Subjects were imported",
    description:
      "Emitted by `POST ENV/subjects/batch`, once per batch, with the ids of the subjects it imported.",
    schema: eventBody(
      "subject.imported",
      "SubjectImportedEvent",
      {
        batch_id: Uuid,
        items: Type.Integer({ minimum: 0, description: "Items in the batch." }),
        imported: Type.Integer({ minimum: 0 }),
        failed: Type.Integer({ minimum: 0 }),
        subject_ids: Type.Array(Uuid, { description: "The subjects imported, in the batch's order." }),
      },
      "A batch of subjects was imported.",
    ),
  },
  "continuous_answer.recorded": {
    summary: "A continuous answer was recorded",
    description:
      "Emitted when a continuous-evaluation answer is stored; a repeated `client_answer_id` stores nothing and emits nothing.",
    schema: eventBody(
      "continuous_answer.recorded",
      "ContinuousAnswerRecordedEvent",
      {
        id: Uuid,
        subject_id: Uuid,
        program_id: Uuid,
        question_id: Type.String(),
        client_answer_id: Type.String(),
        answer: Type.Unknown({ description: "The answer as sent (any JSON value)." }),
        answered_at: nullable(DateTime),
      },
      "A continuous-evaluation answer was recorded.",
    ),
  },
  "bundle.status_changed": {
    summary: "A bundle changed status",
    description: "Emitted by `POST …/bundles/{bundle_id}/status` into every environment of the bundle's app.",
    schema: eventBody(
      "bundle.status_changed",
      "BundleStatusChangedEvent",
      {
        bundle_id: Uuid,
        app_id: Uuid,
        name: Type.String(),
        revision: Type.Integer(),
        fingerprint: Type.String(),
        from: BundleStatus,
        to: BundleStatus,
      },
      "A bundle moved from one status to another.",
    ),
  },
  "quota.updated": {
    summary: "An environment's quotas were updated",
    description: "Emitted by `PATCH ENV/quotas` with the new limits and revision.",
    schema: eventBody(
      "quota.updated",
      "QuotaUpdatedEvent",
      { environment_id: Uuid, revision: Type.Integer(), limits: Limits },
      "The environment's quota limits were replaced.",
    ),
  },
  "membership.created": {
    summary: "A member was added to the organization",
    description:
      "Emitted by `POST ORG/memberships` into every environment of the organization; `status` is `invited` until the invitation is accepted.",
    schema: eventBody(
      "membership.created",
      "MembershipCreatedEvent",
      {
        membership_id: Uuid,
        organization_id: Uuid,
        user_id: Uuid,
        role: Role,
        status: StringEnum(MEMBERSHIP_STATUSES),
      },
      "A membership of the organization was created.",
    ),
  },
  "invitation.accepted": {
    summary: "An invitation was accepted",
    description: "Emitted when an invited user accepts, into every environment of the organization.",
    schema: eventBody(
      "invitation.accepted",
      "InvitationAcceptedEvent",
      { membership_id: Uuid, organization_id: Uuid, user_id: Uuid, role: Role },
      "An invited member accepted and is now active.",
    ),
  },
  "interview.started": {
    summary: "An interview started",
    description: "Emitted when a participant starts an evaluation's interview (the first start only).",
    schema: eventBody(
      "interview.started",
      "InterviewStartedEvent",
      { ...InterviewBase, started_at: DateTime },
      "A participant started an interview.",
    ),
  },
  "interview.completed": {
    summary: "An interview ended",
    description:
      "Emitted when an interview is finished (`completed`) or ended by a guardrail rule (`ended_incomplete`, `ended_reason` = the rule's id) or by the erasure of its subject (`ended_incomplete`, `ended_reason` `subject_erased`).",
    schema: eventBody(
      "interview.completed",
      "InterviewCompletedEvent",
      {
        ...InterviewBase,
        status: StringEnum(["completed", "ended_incomplete"]),
        ended_reason: nullable(Type.String()),
        completed_at: DateTime,
      },
      "An interview ended, with its final status.",
    ),
  },
  "interview.agent_requested": {
    summary: "An interview wants an agent",
    description:
      "Emitted with `interview.started`, so that an agent fleet can dispatch itself to the interview (docs/interview.md#the-agent-protocol).",
    schema: eventBody(
      "interview.agent_requested",
      "InterviewAgentRequestedEvent",
      { evaluation_id: Uuid, interview_id: Uuid },
      "An interview started and waits for an agent.",
    ),
  },
  "evaluation.scored": {
    summary: "An evaluation was scored",
    description:
      "Emitted once per stored result (docs/results.md): when an ended interview's evaluation is scored, and at each rescore. Read the trace with `GET ENV/evaluations/{evaluation_id}/result`.",
    schema: eventBody(
      "evaluation.scored",
      "EvaluationScoredEvent",
      {
        evaluation_id: Uuid,
        subject_id: Uuid,
        bundle_id: Uuid,
        fingerprint: Type.String(),
        outcome: StringEnum(["completed", "ended_incomplete"]),
        report: Type.Object(REPORT_FIELDS, { additionalProperties: false }),
      },
      "An evaluation's result was stored.",
    ),
  },
  "webhook.test": {
    summary: "A test event",
    description:
      "Sent by `POST ENV/webhooks/{id}/test` to that endpoint alone, whatever event types it subscribes to.",
    schema: eventBody(
      "webhook.test",
      "WebhookTestEvent",
      { endpoint_id: Uuid },
      "A test delivery to one endpoint.",
    ),
  },
  "webhook.endpoint_disabled": {
    summary: "The platform disabled a webhook endpoint",
    description:
      "Emitted when the platform (not a client) disables an endpoint: its receiver answered `410 Gone` (`gone`), or its deliveries failed for 5 days (`failing`, with `failing_since`).",
    schema: eventBody(
      "webhook.endpoint_disabled",
      "WebhookEndpointDisabledEvent",
      {
        endpoint_id: Uuid,
        reason: StringEnum(["gone", "failing"]),
        disabled_at: DateTime,
        failing_since: nullable(DateTime),
      },
      "An endpoint was disabled by the platform.",
    ),
  },
  "subject.erasure_requested": {
    summary: "A subject's erasure was asked for",
    description:
      "Emitted by `DELETE ENV/subjects/{subject_id}` (the first request only); every plane erases what it holds about the subject on it (docs/subjects.md#erasure). Ids and times only.",
    schema: eventBody(
      "subject.erasure_requested",
      "SubjectErasureRequestedEvent",
      { subject_id: Uuid, requested_at: DateTime },
      "A subject's erasure began.",
    ),
  },
  "subject.erased": {
    summary: "A subject was erased",
    description:
      "Emitted once, when every plane has erased what it held about the subject (docs/subjects.md#erasure). Ids and times only.",
    schema: eventBody(
      "subject.erased",
      "SubjectErasedEvent",
      { subject_id: Uuid, requested_at: DateTime, completed_at: DateTime },
      "Every plane erased what it held about a subject.",
    ),
  },
} satisfies Record<EventType, CatalogEntry>;

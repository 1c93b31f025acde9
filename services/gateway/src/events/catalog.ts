import type { JsonObject } from "@bufbuild/protobuf";
import { QUOTA_COUNTERS, ROLES } from "@evalp/kit";
import { type TObject, type TProperties, Type } from "@sinclair/typebox";
import { MEMBERSHIP_STATUSES } from "../routes/control/wire.js";
import { REPORT_FIELDS } from "../routes/interview/wire-schemas.js";
import { BUNDLE_STATUSES } from "../routes/platform/wire.js";
import type { EVENT_TYPES } from "../routes/webhooks/wire.js";
import { DateTime, nullable, Uuid } from "../routes/wire.js";
import { StringEnum } from "../validation/request-validator.js";

/** An event type a webhook endpoint can subscribe to (docs/webhooks.md, docs/interview.md#the-agent-protocol); `*` is not one. */
export type EventType = Exclude<(typeof EVENT_TYPES)[number], "*">;

/**
 * One entry of the catalog: the body's named schema, what the document says of the event, and a
 * sample body (the document's example of the webhook's request body; a unit test validates each
 * against its schema).
 */
export type CatalogEntry = {
  schema: TObject;
  summary: string;
  description: string;
  sample: EventSample;
};

/** A sample body: the envelope's fields and a `data` as the event's emitter writes one. */
export type EventSample = {
  id: string;
  type: EventType;
  timestamp: string;
  environment_id: string;
  /** JSON throughout, as the event is emitted with it (`evalp trigger`). */
  data: JsonObject;
};

/** Ids the samples share, so that one sample's subject is the next one's. */
const SAMPLE_IDS = {
  environment: "0b9e6f7a-3c1d-4e2f-8a5b-6c7d8e9f0a1b",
  organization: "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f",
  app: "2d3e4f5a-6b7c-4d8e-9f0a-1b2c3d4e5f60",
  subject: "3e4f5a6b-7c8d-4e9f-8a1b-2c3d4e5f6071",
  program: "4f5a6b7c-8d9e-4f0a-9b2c-3d4e5f607182",
  bundle: "5a6b7c8d-9e0f-4a1b-8c3d-4e5f60718293",
  evaluation: "6b7c8d9e-0f1a-4b2c-9d4e-5f60718293a4",
  interview: "7c8d9e0f-1a2b-4c3d-8e5f-60718293a4b5",
  endpoint: "8d9e0f1a-2b3c-4d4e-9f60-718293a4b5c6",
  user: "9e0f1a2b-3c4d-4e5f-8a71-8293a4b5c6d7",
  membership: "af1a2b3c-4d5e-4f60-9b82-93a4b5c6d7e8",
} as const;

/** A sample body of `type` with this `data`, its envelope the same for every sample but its id. */
function sample(type: EventType, id: string, data: JsonObject): EventSample {
  return { id, type, timestamp: "2026-11-25T10:00:00.000Z", environment_id: SAMPLE_IDS.environment, data };
}

const SAMPLE_REPORT = {
  bundle_id: SAMPLE_IDS.bundle,
  fingerprint: "sha256:9c1185a5c5e9fc54612808977ee8f548b2258d31",
  respondent_id: SAMPLE_IDS.subject,
  axes: [{ axis: "experience", label: "Experience", score: 72, band_id: "senior", band_label: "Senior" }],
  title: "Backend engineer screening",
  sections: [
    {
      id: "technical",
      title: "Technical",
      axes: [{ axis: "experience", label: "Experience", score: 72, band_id: "senior", band_label: "Senior" }],
    },
  ],
};

const SAMPLE_INTERVIEW = {
  evaluation_id: SAMPLE_IDS.evaluation,
  interview_id: SAMPLE_IDS.interview,
  subject_id: SAMPLE_IDS.subject,
  program_id: SAMPLE_IDS.program,
  bundle_id: SAMPLE_IDS.bundle,
  config_fingerprint: "sha256:9c1185a5c5e9fc54612808977ee8f548b2258d31",
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
    sample: sample("subject.imported", "b01d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5", {
      batch_id: "c12e3f4a-5b6c-4d7e-9f80-91a2b3c4d5e6",
      items: 2,
      imported: 2,
      failed: 0,
      subject_ids: [SAMPLE_IDS.subject, "d23f4a5b-6c7d-4e8f-8091-a2b3c4d5e6f7"],
    }),
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
    sample: sample("continuous_answer.recorded", "e34a5b6c-7d8e-4f90-91a2-b3c4d5e6f708", {
      id: "f45b6c7d-8e9f-4a01-a2b3-c4d5e6f70819",
      subject_id: SAMPLE_IDS.subject,
      program_id: SAMPLE_IDS.program,
      question_id: "weekly-mood",
      client_answer_id: "mobile-7f3a-0001",
      answer: { value: 4, note: "better than last week" },
      answered_at: "2026-11-25T09:58:12.000Z",
    }),
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
    sample: sample("bundle.status_changed", "056c7d8e-9f0a-4b12-b3c4-d5e6f708192a", {
      bundle_id: SAMPLE_IDS.bundle,
      app_id: SAMPLE_IDS.app,
      name: "Backend engineer screening",
      revision: 3,
      fingerprint: "sha256:9c1185a5c5e9fc54612808977ee8f548b2258d31",
      from: "validated",
      to: "published",
    }),
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
    sample: sample("quota.updated", "167d8e9f-0a1b-4c23-84d5-e6f708192a3b", {
      environment_id: SAMPLE_IDS.environment,
      revision: 2,
      limits: {
        active_participant_sessions: 500,
        active_subjects: 100_000,
        behavioral_event_batch_size: 1_000,
        continuous_event_batch_size: 1_000,
        evaluations: 50_000,
        programs: 200,
        webhook_endpoints: 50,
      },
    }),
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
    sample: sample("membership.created", "278e9f0a-1b2c-4d34-95e6-f708192a3b4c", {
      membership_id: SAMPLE_IDS.membership,
      organization_id: SAMPLE_IDS.organization,
      user_id: SAMPLE_IDS.user,
      role: "member",
      status: "invited",
    }),
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
    sample: sample("invitation.accepted", "389f0a1b-2c3d-4e45-a6f7-08192a3b4c5d", {
      membership_id: SAMPLE_IDS.membership,
      organization_id: SAMPLE_IDS.organization,
      user_id: SAMPLE_IDS.user,
      role: "member",
    }),
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
    sample: sample("interview.started", "49a01b2c-3d4e-4f56-b708-192a3b4c5d6e", {
      ...SAMPLE_INTERVIEW,
      started_at: "2026-11-25T09:40:00.000Z",
    }),
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
    sample: sample("interview.completed", "5ab12c3d-4e5f-4067-8819-2a3b4c5d6e7f", {
      ...SAMPLE_INTERVIEW,
      status: "completed",
      ended_reason: null,
      completed_at: "2026-11-25T09:59:30.000Z",
    }),
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
    sample: sample("interview.agent_requested", "6bc23d4e-5f60-4178-992a-3b4c5d6e7f80", {
      evaluation_id: SAMPLE_IDS.evaluation,
      interview_id: SAMPLE_IDS.interview,
    }),
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
    sample: sample("evaluation.scored", "7cd34e5f-6071-4289-aa3b-4c5d6e7f8091", {
      evaluation_id: SAMPLE_IDS.evaluation,
      subject_id: SAMPLE_IDS.subject,
      bundle_id: SAMPLE_IDS.bundle,
      fingerprint: "sha256:9c1185a5c5e9fc54612808977ee8f548b2258d31",
      outcome: "completed",
      report: SAMPLE_REPORT,
    }),
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
    sample: sample("webhook.test", "8de45f60-7182-439a-bb4c-5d6e7f8091a2", {
      endpoint_id: SAMPLE_IDS.endpoint,
    }),
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
    sample: sample("webhook.endpoint_disabled", "9ef56071-8293-44ab-8c5d-6e7f8091a2b3", {
      endpoint_id: SAMPLE_IDS.endpoint,
      reason: "failing",
      disabled_at: "2026-11-25T10:00:00.000Z",
      failing_since: "2026-11-20T09:12:44.000Z",
    }),
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
    sample: sample("subject.erasure_requested", "a0f67182-93a4-45bc-9d6e-7f8091a2b3c4", {
      subject_id: SAMPLE_IDS.subject,
      requested_at: "2026-11-25T10:00:00.000Z",
    }),
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
    sample: sample("subject.erased", "b1078293-a4b5-46cd-ae7f-8091a2b3c4d5", {
      subject_id: SAMPLE_IDS.subject,
      requested_at: "2026-11-25T10:00:00.000Z",
      completed_at: "2026-11-25T10:00:04.000Z",
    }),
  },
} satisfies Record<EventType, CatalogEntry>;

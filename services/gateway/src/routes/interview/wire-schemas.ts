import { Type } from "@sinclair/typebox";
import { DateTime, FreeObject, named, nullable, OneOf, ref, Uuid } from "../wire.js";

// The interview plane's resources on the wire (docs/interview.md): their schemas, named components
// of the document (`wire.ts` maps the RPC messages to them).

export const Evaluation = Type.Object(
  {
    id: Uuid,
    environment_id: Uuid,
    subject_id: Uuid,
    bundle_id: Uuid,
    program_id: nullable(Uuid),
    status: Type.String({
      description: "`pending` until the participant starts, then the interview's status",
    }),
    created_at: DateTime,
  },
  named("Evaluation", "An evaluation of a subject on a bundle."),
);

export const ParticipantSession = Type.Object(
  {
    session_id: Uuid,
    participant_token: Type.String(),
    expires_at: DateTime,
    url: Type.String({
      format: "uri",
      description:
        "The hosted interview page for this session, `<PUBLIC_URL>/interview#<participant_token>`: " +
        "a link to hand to the participant (the token is in the fragment, which no server logs).",
    }),
  },
  named(
    "ParticipantSession",
    "A participant session of an evaluation; its participant token is shown this once.",
  ),
);

export const BehavioralEvent = Type.Object(
  {
    type: Type.String(),
    occurred_at: DateTime,
    question_id: nullable(Type.String()),
    elapsed_ms: nullable(Type.Number()),
  },
  named("BehavioralEvent", "A participant's behavioral event (privacy-minimized)."),
);

export const BehavioralEventReceipt = Type.Object(
  { accepted: Type.Integer() },
  named("BehavioralEventReceipt", "How many events were recorded."),
);

export const Question = Type.Object(
  {
    id: Type.String(),
    prompt: Type.String(),
    input: Type.String(),
    options: Type.Array(Type.Object({ id: Type.String(), label: Type.String() })),
    required: Type.Boolean(),
    min: Type.Optional(Type.Number()),
    max: Type.Optional(Type.Number()),
  },
  named("Question", "A question of the interview, as it is asked."),
);

export const Proposal = Type.Object(
  {
    id: Uuid,
    kind: Type.String(),
    confirmation_text: Type.String(),
    created_at: DateTime,
    question: ref(Question),
    previous_answer: Type.Optional(FreeObject),
    proposed_answer: Type.Optional(FreeObject),
  },
  named("Proposal", "An answer the agent proposes, for the participant to confirm or reject."),
);

export const Scenario = Type.Object(
  {
    id: Type.String(),
    prompt: Type.String(),
    framing: Type.String(),
    follow_ups_used: Type.Integer(),
    follow_ups_remaining: Type.Integer(),
    max_follow_ups: Type.Integer(),
    criteria: Type.Array(Type.Object({ id: Type.String(), label: Type.String() })),
  },
  named("Scenario", "The scenario being explored, and its follow-ups."),
);

/** The interview's state as both sides see it (docs/interview.md#the-agent-protocol): the `interview` of every step. */
export const Interview = Type.Object(
  {
    available: Type.Boolean(),
    consented: Type.Boolean(),
    status: Type.String(),
    agent_connected: Type.Boolean(),
    attempt: Type.Integer(),
    interview_id: Type.Optional(Uuid),
    item_kind: Type.Optional(Type.String()),
    item_text: Type.Optional(Type.String()),
    missing: Type.Array(
      Type.Object({
        id: Type.String(),
        kind: Type.String(),
        label: Type.String(),
        section_id: Type.String(),
      }),
    ),
    paused_reason: Type.Optional(Type.String()),
    progress: Type.Number(),
    question: Type.Optional(ref(Question)),
    ready_to_finish: Type.Boolean(),
    revision: Type.Integer(),
    section: Type.Optional(
      Type.Object({
        id: Type.String(),
        title: Type.String(),
        position: Type.Integer(),
        total: Type.Integer(),
        count: Type.Integer(),
        answered: Type.Integer(),
        description: Type.Optional(Type.String()),
      }),
    ),
    target_minutes_min: Type.Optional(Type.Integer()),
    target_minutes_max: Type.Optional(Type.Integer()),
    unavailable_reason: Type.Optional(Type.String()),
    pending_proposal: Type.Optional(ref(Proposal)),
    scenario: Type.Optional(ref(Scenario)),
  },
  named(
    "ParticipantInterview",
    "The interview's state: where it stands, the question asked, progress and what is missing.",
  ),
);

/** `{"interview": …}`: what consent, answers, finish and a proposal's decision answer. */
export const InterviewState = Type.Object(
  { interview: ref(Interview) },
  named("ParticipantInterviewState", "The interview after a step."),
);

export const InterviewStart = Type.Object(
  {
    connection: Type.Object({
      participant_token: Type.String(),
      server_url: Type.String(),
      expires_at: DateTime,
    }),
    interview: ref(Interview),
  },
  named(
    "ParticipantInterviewStart",
    "The interview, started or resumed, and a connection token for the realtime door.",
  ),
);

export const TranscriptEntry = Type.Object(
  {
    entry_id: Uuid,
    seq: Type.Integer(),
    speaker: Type.String(),
    modality: Type.String(),
    text: Type.String(),
    started_at: DateTime,
    ended_at: Type.Optional(DateTime),
    interrupted: Type.Boolean(),
  },
  named("TranscriptEntry", "A question, an answer or an utterance."),
);

export const TranscriptPage = Type.Object(
  { items: Type.Array(ref(TranscriptEntry)), next_after_seq: Type.Integer() },
  named("TranscriptPage", "Transcript entries after a sequence number."),
);

export const InterviewEntry = Type.Object(
  {
    id: Uuid,
    seq: Type.Integer(),
    kind: Type.String(),
    actor: Type.String(),
    attempt: Type.Integer(),
    occurred_at: DateTime,
    received_at: DateTime,
    payload: FreeObject,
    question_id: Type.Optional(Type.String()),
    ref_entry_id: Type.Optional(Uuid),
    scenario_id: Type.Optional(Type.String()),
    section_id: Type.Optional(Type.String()),
  },
  named("InterviewEntry", "An entry of the interview's record, in order."),
);

export const InterviewMetrics = Type.Object(
  {
    attempts: Type.Integer(),
    clarifications: Type.Integer(),
    consistency_follow_ups: Type.Integer(),
    corrections: Type.Integer(),
    duration_seconds: Type.Integer(),
    rejected_proposals: Type.Integer(),
    scenario_evidence: Type.Integer(),
    scenario_gaps: Type.Integer(),
    provider_errors: FreeObject,
    usage: FreeObject,
    api_latency_p95_ms: Type.Optional(Type.Number()),
    estimated_cost_usd: Type.Optional(Type.Number()),
    turn_latency_p50_ms: Type.Optional(Type.Number()),
    turn_latency_p95_ms: Type.Optional(Type.Number()),
  },
  named("InterviewMetrics", "What the interview took: counts, usage, latency and cost."),
);

/** The interface's "Evaluation interview (operator view)". */
export const EvaluationInterview = Type.Object(
  {
    interview_id: Uuid,
    evaluation_id: Uuid,
    version_bundle_id: Uuid,
    config_fingerprint: Type.String(),
    status: Type.String(),
    started_at: DateTime,
    last_activity_at: DateTime,
    completed_at: Type.Optional(DateTime),
    ended_reason: Type.Optional(Type.String()),
    paused_reason: Type.Optional(Type.String()),
    next_after_seq: Type.Integer(),
    entries: Type.Array(ref(InterviewEntry)),
    metrics: ref(InterviewMetrics),
  },
  named("EvaluationInterview", "An evaluation's interview as its operator sees it."),
);

export const AnalyticsSummary = Type.Object(
  {
    environment_id: Uuid,
    starts_at: DateTime,
    ends_at: DateTime,
    sessions_started: Type.Integer(),
    sessions_completed: Type.Integer(),
    completion_rate: Type.Number(),
    median_questions: nullable(Type.Number()),
    median_active_ms: nullable(Type.Number()),
    question_metrics: Type.Array(FreeObject),
    privacy_floor_applied: Type.Boolean(),
    axis_metrics: Type.Array(
      Type.Object({
        axis: Type.String(),
        label: Type.String(),
        scored: Type.Integer({ description: "Results with a score on this axis." }),
        mean: nullable(Type.Number()),
        median: nullable(Type.Number()),
        bands: Type.Array(
          Type.Object({ band_id: Type.String(), band_label: Type.String(), count: Type.Integer() }),
        ),
      }),
      {
        description:
          "Per scorecard axis of the latest results of the window's interviews; `[]` under the privacy floor.",
      },
    ),
  },
  named("AnalyticsSummary", "The interviews started in a window, summed up."),
);

export const AgentSession = Type.Object(
  {
    agent_session_id: Uuid,
    agent_token: Type.String(),
    server_url: Type.String(),
    expires_at: DateTime,
    interview_id: Uuid,
  },
  named("AgentSession", "An agent session on an interview; its agent token is shown this once."),
);

export const AgentPrice = Type.Object(
  { provider: Type.String(), model: Type.String(), unit: Type.String(), usd_per_unit: Type.Number() },
  named("AgentPrice", "The price of a unit of a provider's model."),
);

export const AgentPrices = Type.Object(
  { prices: Type.Array(ref(AgentPrice)), updated_at: DateTime },
  named("AgentPrices", "The environment's agent price table."),
);

export const AgentAck = Type.Object(
  {
    type: Type.Literal("ack"),
    id: Type.String(),
    entry: Type.Optional(ref(InterviewEntry)),
    interview: ref(Interview),
  },
  named("AgentAck", "A command's acknowledgement: its entry, if any, and the interview after it."),
);

/** The named schemas of this plane, registered once with the app (components of the document). */
// The verdicts (docs/results.md): an evaluation as listed, and its results.

export const EVALUATION_STATUSES = ["pending", "active", "paused", "completed", "ended_incomplete"] as const;

export const ListedEvaluation = Type.Object(
  { ...Evaluation.properties, scored_at: nullable(DateTime) },
  named(
    "ListedEvaluation",
    "An evaluation as `GET ENV/evaluations/{id}` answers it, with when it was last scored.",
  ),
);

const AxisScore = Type.Object({
  axis: Type.String(),
  label: Type.String(),
  score: nullable(Type.Number()),
  band_id: nullable(Type.String()),
  band_label: nullable(Type.String()),
});

/** The report's fields, shared by the result's schema and the `evaluation.scored` event's. */
export const REPORT_FIELDS = {
  bundle_id: Uuid,
  fingerprint: Type.String(),
  respondent_id: Type.String({ description: "The evaluation's subject id." }),
  axes: Type.Array(AxisScore),
  title: nullable(Type.String()),
  sections: Type.Array(Type.Object({ id: Type.String(), title: Type.String(), axes: Type.Array(AxisScore) })),
};

export const ScoreReport = Type.Object(
  REPORT_FIELDS,
  named(
    "ScoreReport",
    "The bundle's scorecard and report template applied: preview's report (docs/expressions.md).",
  ),
);

export const EvaluationResult = Type.Object(
  {
    evaluation_id: Uuid,
    subject_id: Uuid,
    bundle_id: Uuid,
    fingerprint: Type.String(),
    outcome: OneOf(["completed", "ended_incomplete"], { description: "How the interview ended." }),
    scored_at: DateTime,
    report: ref(ScoreReport),
    trace: Type.Record(Type.String(), Type.Unknown(), {
      description:
        "How each axis was computed (preview's trace); `errors` when the scorecard could not be compiled.",
    }),
  },
  named("EvaluationResult", "One scoring of an evaluation: immutable once stored."),
);

export const EvaluationResultList = Type.Object(
  { items: Type.Array(ref(EvaluationResult)) },
  named("EvaluationResultList", "Every result of an evaluation, oldest first."),
);

export const INTERVIEW_SCHEMAS = [
  ListedEvaluation,
  ScoreReport,
  EvaluationResult,
  EvaluationResultList,
  Evaluation,
  ParticipantSession,
  BehavioralEvent,
  BehavioralEventReceipt,
  Question,
  Proposal,
  Scenario,
  Interview,
  InterviewState,
  InterviewStart,
  TranscriptEntry,
  TranscriptPage,
  InterviewEntry,
  InterviewMetrics,
  EvaluationInterview,
  AnalyticsSummary,
  AgentSession,
  AgentPrice,
  AgentPrices,
  AgentAck,
];

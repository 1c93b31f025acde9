import { type Plane, type Prose, plane } from "../route.js";

/** The interview plane's operations, by operationId: each is one route of the plane. */
export type InterviewOperationId =
  | "createEvaluation"
  | "getEvaluation"
  | "createParticipantSession"
  | "getEvaluationInterview"
  | "listBehavioralEvents"
  | "getAnalyticsSummary"
  | "createAgentSession"
  | "putAgentPrices"
  | "startInterview"
  | "consentToInterview"
  | "submitAnswer"
  | "finishInterview"
  | "recordBehavioralEvents"
  | "getTranscript"
  | "confirmProposal"
  | "rejectProposal"
  | "getAgentInterview"
  | "runAgentCommand"
  | "listEvaluations"
  | "getEvaluationResult"
  | "listEvaluationResults"
  | "rescoreEvaluation"
  | "getAgentTranscript"
  | "revokeParticipantSession";

/**
 * What `/openapi.json` says of each of the interview plane's operations: its summary, its
 * description and what each success status means. The routes beside this file declare the rest;
 * the compiler holds the two together (an operation without its prose, or prose without its
 * operation, does not build).
 */
export const INTERVIEW_PROSE = {
  createEvaluation: {
    summary: "Create an evaluation",
    description:
      "Creates an evaluation of a subject on a bundle of this app, which must be published (409 `bundle_not_published` otherwise); it counts against the `evaluations` quota. Requires `evaluations:write` and an Idempotency-Key.",
    responses: { 201: "The evaluation, created (status `pending`)." },
  },
  getEvaluation: {
    summary: "Get an evaluation",
    description: "One evaluation of the environment, with its status. Requires `evaluations:read`.",
    responses: { 200: "The evaluation." },
  },
  createParticipantSession: {
    summary: "Start a participant session",
    description:
      "Issues a participant token bound to a new session of the evaluation, valid for `ttl_seconds` (60-3600, 900 by default); the token is shown only in this answer. The session counts against `active_participant_sessions` while it is unexpired and not completed. Requires `evaluations:write` and an Idempotency-Key." +
      "\n\n" +
      "A new session supersedes the evaluation's older ones: their tokens are refused from then on (401 `session_superseded`) and their realtime sockets close with 4401. They stop counting against `active_participant_sessions`, so replacing a session never needs more quota." +
      "\n\n" +
      "The answer's `url` is the hosted interview page for the session, `<PUBLIC_URL>/interview#<token>` (docs/pages.md): a link to send the participant when the client builds no interview screen of its own. The token is in the fragment, which browsers do not send to servers.",
    responses: { 201: "The session and its participant token." },
  },
  getEvaluationInterview: {
    summary: "Get an evaluation's interview",
    description:
      "The operator's view of the evaluation's interview: its status, the entries after `after_seq` (at most `limit`, with the `next_after_seq` to continue from) and its metrics. 404 `not_found` before the participant has started. Requires `evaluations:read`.",
    responses: { 200: "The interview, a page of its entries, and its metrics." },
  },
  listBehavioralEvents: {
    summary: "List an evaluation's behavioral events",
    description:
      "The behavioral events its participant recorded, newest first, a page at a time (docs/paging.md); privacy-minimized. Requires `evaluations:read`.",
    responses: { 200: "A page of behavioral events." },
  },
  getAnalyticsSummary: {
    summary: "Summarize the environment's interviews",
    description:
      "The interviews started in [`starts_at`, `ends_at`): how many started and completed, the completion rate, medians and per-question metrics. `ends_at` must come after `starts_at`, at most 366 days later (422 otherwise). Below five started sessions the privacy floor applies: no per-question metrics and null medians. Requires `analytics:read`.",
    responses: { 200: "The window's summary." },
  },
  createAgentSession: {
    summary: "Start an agent session",
    description:
      "Starts an agent session on the evaluation's interview (404 before the participant has started), valid for `ttl_seconds` (60-900, 900 by default). Its agent token, shown only in this answer, is accepted only under `/v1/agent/` and only for this interview; it opens the agent's WebSocket at `server_url` (`GET /v1/agent/realtime`, the token as `Authorization: Bearer` or subprotocol `bearer.<token>`), whose frames are the commands of the HTTP mirror, each answered with an ack or an error frame, and `state` frames on every new revision. A newer session supersedes this one: its socket closes with `session_superseded` and its token is refused. Every frame is described in `/asyncapi.json`. Requires `interviews:agent` and an Idempotency-Key.",
    responses: { 201: "The agent session and its agent token." },
  },
  putAgentPrices: {
    summary: "Replace the agent price table",
    description:
      "Replaces the environment's price table, from which an interview's `estimated_cost_usd` is computed (its usage × these prices; null when a usage line has no price). Requires `evaluations:write`; an Idempotency-Key is honoured when sent.",
    responses: { 200: "The price table." },
  },
  startInterview: {
    summary: "Start or resume the interview",
    description:
      "Starts the participant's interview (the first call creates it) or resumes it: its state, and a fresh connection token (at most 15 minutes) for the realtime door at `server_url`. Until consent the status is `not_started`. An Idempotency-Key is honoured when sent." +
      "\n\n" +
      'The realtime door (`GET /v1/participant/realtime`) upgrades to a WebSocket opened with the connection token, as `Authorization: Bearer` or the subprotocol `bearer.<token>`. The client sends utterances `{"type":"utterance","modality":"voice"|"text","text","started_at","ended_at"?,"interrupted"?}`, each answered `{"type":"entry","entry"}`; agent turns arrive the same way, and each new revision of the interview as `{"type":"state","interview"}`. A bad or refused frame gets `{"type":"error","code","message","context"}` and the socket stays open; it closes (4401) when the connection token expires. Every frame is described in `/asyncapi.json` (AsyncAPI 3).' +
      "\n\n" +
      "The door refuses the upgrade with 429 `rate_limited` past REALTIME_SOCKETS_PER_SESSION open sockets of the participant session, or REALTIME_SOCKETS_PER_ADDRESS of the client address, counted across every gateway. A revoked or superseded participant session's sockets close with 4401.",
    responses: { 200: "The interview and a connection for the realtime door." },
  },
  consentToInterview: {
    summary: "Consent to the interview",
    description:
      "Records the participant's consent: the interview is in progress and its first question is asked. An Idempotency-Key is honoured when sent.",
    responses: { 200: "The interview, in progress." },
  },
  submitAnswer: {
    summary: "Answer a question",
    description:
      "Answers a question (an answered one again: a correction). The answer is checked against the question's input (422). The interview moves on: the next question, progress, section counts and `ready_to_finish` once every required question is answered. An Idempotency-Key is honoured when sent.",
    responses: { 200: "The interview after the answer." },
  },
  finishInterview: {
    summary: "Finish the interview",
    description:
      "Completes the interview once it is ready to finish (409 `invalid_transition` before) and emits `interview.completed`. An Idempotency-Key is honoured when sent.",
    responses: { 200: "The interview, completed." },
  },
  recordBehavioralEvents: {
    summary: "Record behavioral events",
    description:
      "Records the participant's behavioral events, at most the environment's `behavioral_event_batch_size` at once (422 `batch_too_large` beyond). An Idempotency-Key is honoured when sent.",
    responses: { 202: "How many events were accepted." },
  },
  getTranscript: {
    summary: "Read the transcript",
    description:
      "The transcript after `after_seq` (at most `limit` entries): every question asked, every answer and every realtime utterance, with the `next_after_seq` to continue from.",
    responses: { 200: "A page of the transcript." },
  },
  confirmProposal: {
    summary: "Confirm the pending proposal",
    description:
      "Confirms the answer the agent proposed: it is recorded (a correction when the question was answered already). An Idempotency-Key is honoured when sent.",
    responses: { 200: "The interview with the answer recorded." },
  },
  rejectProposal: {
    summary: "Reject the pending proposal",
    description:
      "Rejects the answer the agent proposed, with an optional reason: the question's `attempt` goes up by one and it is asked again. An Idempotency-Key is honoured when sent.",
    responses: { 200: "The interview with the proposal rejected." },
  },
  getAgentInterview: {
    summary: "Get the interview, as the agent sees it",
    description:
      "The state of the interview the agent token is bound to (401 `session_superseded` once a newer agent session replaced it).",
    responses: { 200: "The interview." },
  },
  runAgentCommand: {
    summary: "Run an agent command",
    description:
      "Runs one command `{type, id, …}` (an utterance, a proposal, a clarification, a report…; each with exactly its fields, 422 otherwise). Its `id` has Idempotency-Key semantics across the interview's agent sessions: the same id answers the stored ack (`Idempotent-Replayed: true`). Refusals are the contract's errors, e.g. 409 `revision_conflict`, `proposal_pending`, `resolve_not_allowed` or `follow_up_limit_reached`.",
    responses: { 200: "The ack: the entry written, if any, and the interview after the command." },
  },
  listEvaluations: {
    summary: "List the environment's evaluations",
    description:
      "The environment's evaluations, newest first, a page at a time (docs/paging.md), each as `GET …/evaluations/{evaluation_id}` answers it plus `scored_at` (when its latest result was stored, null until it is scored). Filters: `status` (`pending`, `active`, `paused`, `completed`, `ended_incomplete`), `subject_id`, `bundle_id`, `program_id`, `created_after` and `created_before` (date-times, both exclusive); a bad value is 422. Requires `evaluations:read`.",
    responses: { 200: "A page of evaluations." },
  },
  getEvaluationResult: {
    summary: "Get an evaluation's result",
    description:
      "The evaluation's latest result (docs/results.md): the bundle's scorecard and report template applied to the interview's final answers, context and signals, with the trace. 409 `result_not_ready` (`context.status`) until the first result is stored: while the evaluation is `pending`, `active` or `paused`, and for the moment between the end of its interview and its scoring. Requires `evaluations:read`.",
    responses: { 200: "The latest result." },
  },
  listEvaluationResults: {
    summary: "List an evaluation's results",
    description:
      "Every result of the evaluation, oldest first: the one scored when its interview ended, then one per rescore; empty until it is scored. Requires `evaluations:read`.",
    responses: { 200: "The results." },
  },
  rescoreEvaluation: {
    summary: "Rescore an evaluation",
    description:
      "Scores the answers, context and signals of the evaluation's first result again, against `bundle_id`, a `published` bundle of the same app (409 `bundle_not_published` otherwise; 409 `result_not_ready` before the first result), and stores the new result, which `GET …/result` then answers; emits `evaluation.scored`. Requires `evaluations:write` and an Idempotency-Key.",
    responses: { 201: "The new result." },
  },
  getAgentTranscript: {
    summary: "Read the transcript as the agent",
    description:
      "The interview's transcript after `after_seq` (at most `limit` entries), paged as the participant's: every question asked, every answer and every utterance, the participant's and the agent's, with the `next_after_seq` to continue from. A replacement agent reloads the conversation with it and goes on. Takes the agent token.",
    responses: { 200: "A page of the transcript." },
  },
  revokeParticipantSession: {
    summary: "Revoke a participant session",
    description:
      "Revokes one participant session of the evaluation: from the answer on, its participant and connection tokens are refused on every gateway (401 `unauthenticated`, and no realtime upgrade), its open realtime sockets close with 4401 and an error frame, and it stops counting against `active_participant_sessions`. Revoking a session already revoked (or superseded) answers 204 again; a session of another evaluation is 404. Requires `evaluations:write` and an Idempotency-Key.",
    responses: { 204: "The session, revoked." },
  },
} satisfies Record<InterviewOperationId, Prose>;

/** The interview plane's tag, and its operations' prose (above). */
export const INTERVIEW: Plane<InterviewOperationId> = plane("interview", INTERVIEW_PROSE);

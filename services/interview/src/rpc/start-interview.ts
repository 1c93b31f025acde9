import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import {
  forwardedCall,
  MAX_TOKEN_SECONDS,
  type PoolClient,
  signParticipantToken,
  withTransaction,
  writeOutboxEvent,
} from "@evalp/kit";
import {
  ConnectionSchema,
  type StartInterviewRequest,
  type StartInterviewResponse,
  StartInterviewResponseSchema,
} from "@evalp/proto/interview/v1/participant";
import { appendEntries } from "../db/entries.js";
import { findInterview, insertInterview, saveInterview } from "../db/interviews.js";
import type { InterviewRow } from "../db/rows.js";
import type { Deps } from "../deps.js";
import type { Components } from "../flow/flow.js";
import { requireSession, type SessionContext } from "../participant-scope.js";
import { eventBase, snapshotOfRow } from "../steps.js";

/** The components an interview runs on, fetched from the platform plane at the first start. */
async function fetchComponents(deps: Deps, session: SessionContext, ctx: HandlerContext) {
  const { evaluation } = session;
  const answer = await deps.platform.bundles.getBundleContents(
    {
      app: { organizationId: evaluation.organization_id, appId: evaluation.app_id },
      bundleId: evaluation.bundle_id,
    },
    forwardedCall(ctx),
  );
  const contents = (answer.contents ?? {}) as Record<string, unknown>;
  const components = {
    experience: contents.experience,
    adaptive_policy: contents.adaptive_policy,
    guardrail: contents.guardrail,
    context: contents.context,
  } as Components;
  return { components, fingerprint: answer.bundle?.fingerprint ?? "" };
}

/** Creates the interview (operator status `active`) unless a concurrent first start did. */
async function createInterview(
  tx: PoolClient,
  session: SessionContext,
  fetched: { components: Components; fingerprint: string },
): Promise<InterviewRow> {
  const { evaluation } = session;
  const interview = await insertInterview(tx, {
    evaluationId: evaluation.id,
    environmentId: evaluation.environment_id,
    bundleId: evaluation.bundle_id,
    fingerprint: fetched.fingerprint,
    components: fetched.components,
  });
  if (!interview) return (await findInterview(tx, evaluation.id)) as InterviewRow;
  const now = interview.started_at;
  await appendEntries(
    tx,
    interview,
    [{ kind: "status_changed", actor: "participant", payload: { from: null, to: "active" } }],
    now,
  );
  await saveInterview(tx, interview, now);
  await writeOutboxEvent(tx, {
    type: "interview.started",
    environmentId: interview.environment_id,
    data: { ...eventBase(evaluation, interview), started_at: interview.started_at.toISOString() },
  });
  // docs/interview.md#the-agent-protocol: an agent fleet dispatches itself on this event.
  await writeOutboxEvent(tx, {
    type: "interview.agent_requested",
    environmentId: interview.environment_id,
    data: { evaluation_id: evaluation.id, interview_id: interview.id },
  });
  return interview;
}

/**
 * #17: the first call creates the interview (`interview.started`); every call, later ones
 * included, answers 200 with the snapshot as it stands and a fresh connection token for the
 * realtime door (at most 15 min, and never past the participant session).
 */
export function startInterview(deps: Deps) {
  return async (req: StartInterviewRequest, ctx: HandlerContext): Promise<StartInterviewResponse> => {
    const session = await requireSession(deps.pool, req.participant);
    let interview = await findInterview(deps.pool, session.evaluation.id);
    if (!interview) {
      const fetched = await fetchComponents(deps, session, ctx);
      interview = await withTransaction(deps.pool, (tx) => createInterview(tx, session, fetched));
    }
    const limit = Date.now() + MAX_TOKEN_SECONDS.connection * 1000;
    const expiresAt = new Date(Math.floor(Math.min(limit, session.expiresAt.getTime()) / 1000) * 1000);
    const token = await signParticipantToken(
      deps.config.JWT_SECRET,
      "connection",
      {
        sessionId: session.sessionId,
        evaluationId: session.evaluation.id,
        environmentId: session.evaluation.environment_id,
      },
      expiresAt,
    );
    return create(StartInterviewResponseSchema, {
      connection: create(ConnectionSchema, {
        participantToken: token,
        serverUrl: deps.config.REALTIME_URL,
        expiresAt: timestampFromDate(expiresAt),
      }),
      interview: snapshotOfRow(interview),
    });
  };
}

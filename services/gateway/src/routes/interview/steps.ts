import type { Snapshot } from "@evalp/proto/interview/v1/interview";
import type { TSchema } from "@sinclair/typebox";
import type { InterviewHub } from "../../realtime/hub.js";
import {
  type Api,
  type FullPath,
  type PathParams,
  type RouteContext,
  type RouteSpec,
  route,
} from "../route.js";
import { ref } from "../schemas.js";
import { INTERVIEW } from "./plane.js";
import { participantRef } from "./requests.js";
import { interviewJson } from "./wire.js";
import { InterviewState } from "./wire-schemas.js";

/** Participant POSTs honour an Idempotency-Key when sent, scoped to the session (docs/idempotency.md). */
export const STEP = { auth: "participant", idempotency: "optional" } as const;
/** What every participant step may answer beyond the common errors: a step out of turn. */
export const STEP_ERRORS = [409];

type StepSpec<P extends TSchema, B extends TSchema> = Pick<RouteSpec<P, TSchema, B, TSchema>, "body"> & {
  /** The step itself: the interview plane's answer, with the interview after it. */
  take: (context: RouteContext<P, TSchema, B>) => Promise<{ interview?: Snapshot }>;
};

/**
 * A step of the participant's interview (consent, an answer, finish, a proposal's decision): a
 * POST answered `{"interview"}`, which is pushed to the interview's sockets when its revision
 * changed (docs/interview.md#the-agent-protocol).
 */
export function interviewStep<Prefix extends string, Path extends `/${string}`, B extends TSchema = TSchema>(
  app: Api<Prefix>,
  hub: InterviewHub,
  operationId: string,
  path: Path,
  spec: StepSpec<PathParams<FullPath<Prefix, `POST ${Path}`>>, B>,
): void {
  const { take, ...declared } = spec;
  route(app, INTERVIEW, operationId, `POST ${path}`, {
    ...declared,
    access: STEP,
    response: ref(InterviewState),
    errors: STEP_ERRORS,
    handler: async (context) => {
      const answer = await take(context);
      const interview = interviewJson(answer.interview);
      hub.deliverState(participantRef(context.request).evaluationId, interview);
      return { interview };
    },
  });
}

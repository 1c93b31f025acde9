import type { FastifyInstance } from "fastify";
import type { RouteDeps } from "../deps.js";
import { type Api, plane, under } from "../index.js";
import { ENV_PREFIX } from "../wire.js";
import { agentRoutes, agentSetupRoutes } from "./agent.js";
import { agentRealtimeRoutes } from "./agent-realtime.js";
import { analyticsRoutes } from "./analytics.js";
import { evaluationRoutes, resultRoutes } from "./evaluations.js";
import { participantRoutes } from "./participant.js";
import { proposalRoutes } from "./proposals.js";
import prose from "./prose.json" with { type: "json" };
import { realtimeRoutes } from "./realtime.js";
import { type OpenApiComponents, realtimeDocument } from "./realtime-document.js";
import { INTERVIEW_SCHEMAS } from "./wire-schemas.js";

/** The interview plane's routes: evaluations, participants, agents, analytics and the realtime doors. */
export async function registerInterviewRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  for (const schema of INTERVIEW_SCHEMAS) app.addSchema(schema);
  await under(app, INTERVIEW, ENV_PREFIX, deps, [
    evaluationRoutes,
    resultRoutes,
    analyticsRoutes,
    agentSetupRoutes,
  ]);
  await under(app, INTERVIEW, "/v1/participant", deps, [participantRoutes, proposalRoutes, realtimeRoutes]);
  await under(app, INTERVIEW, "/v1/agent", deps, [agentRoutes, agentRealtimeRoutes]);
  // The realtime doors' frames as AsyncAPI 3, built once from the OpenAPI document's schemas.
  let realtime: object | undefined;
  app.get("/asyncapi.json", { schema: { hide: true } }, async () => {
    realtime ??= realtimeDocument(app.swagger() as OpenApiComponents, deps.config.REALTIME_URL);
    return realtime;
  });
}

/**
 * The interview plane's tag, and what `/openapi.json` says of each of its operations (prose.json, by
 * operationId): its summary, its description and what each success status means. The routes
 * beside this file declare the rest: a route's operation is one of these (the compiler refuses one
 * without its prose), and a unit test finds the route of each.
 */
export const INTERVIEW = plane("interview", prose);

/** A plugin of the interview plane's routes under `Prefix` (`under`): its routes' operations are the plane's. */
export type InterviewApi<Prefix extends string> = Api<Prefix, keyof typeof prose>;

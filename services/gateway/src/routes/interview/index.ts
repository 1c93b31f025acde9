import type { FastifyInstance } from "fastify";
import type { RouteDeps } from "../deps.js";
import { ENV_PREFIX } from "../environment.js";
import { under } from "../route.js";
import { agentRoutes, agentSetupRoutes } from "./agent.js";
import { agentRealtimeRoutes } from "./agent-realtime.js";
import { analyticsRoutes } from "./analytics.js";
import { evaluationRoutes, resultRoutes } from "./evaluations.js";
import { participantRoutes } from "./participant.js";
import { proposalRoutes } from "./proposals.js";
import { realtimeRoutes } from "./realtime.js";
import { type OpenApiComponents, realtimeDocument } from "./realtime-document.js";
import { INTERVIEW_SCHEMAS } from "./wire-schemas.js";

/** The interview plane's routes: evaluations, participants, agents, analytics and the realtime doors. */
export async function registerInterviewRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  for (const schema of INTERVIEW_SCHEMAS) app.addSchema(schema);
  await under(app, ENV_PREFIX, (api) => {
    evaluationRoutes(api, deps);
    resultRoutes(api, deps);
    analyticsRoutes(api, deps);
    agentSetupRoutes(api, deps);
  });
  await under(app, "/v1/participant", (api) => {
    participantRoutes(api, deps);
    proposalRoutes(api, deps);
    realtimeRoutes(api, deps);
  });
  await under(app, "/v1/agent", (api) => {
    agentRoutes(api, deps);
    agentRealtimeRoutes(api, deps);
  });
  // The realtime doors' frames as AsyncAPI 3, built once from the OpenAPI document's schemas.
  let realtime: object | undefined;
  app.get("/asyncapi.json", { schema: { hide: true } }, async () => {
    realtime ??= realtimeDocument(app.swagger() as OpenApiComponents, deps.config.REALTIME_URL);
    return realtime;
  });
}

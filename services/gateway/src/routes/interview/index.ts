import type { FastifyInstance } from "fastify";
import type { RouteDeps } from "../deps.js";
import { agentRoutes } from "./agent.js";
import { analyticsRoutes } from "./analytics.js";
import { evaluationRoutes } from "./evaluations.js";
import { participantRoutes } from "./participant.js";
import { realtimeRoutes } from "./realtime.js";

/** The interview plane's routes: evaluations, participants, agents, analytics and the realtime doors. */
export async function registerInterviewRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  evaluationRoutes(app, deps);
  analyticsRoutes(app, deps);
  participantRoutes(app, deps);
  realtimeRoutes(app, deps);
  agentRoutes(app, deps);
}

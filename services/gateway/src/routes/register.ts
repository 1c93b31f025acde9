// Every route of the API, registered where it lives: each plugin's plane, prefix and files of
// routes (`under`), the named schemas the planes share, and the documents served beside them.
import type { FastifyInstance } from "fastify";
import { activeOrganizationRoutes } from "./control/active-organization.js";
import { apiKeyRoutes } from "./control/api-keys.js";
import { appRoutes } from "./control/apps.js";
import { auditRoutes } from "./control/audit.js";
import { authSessionRoutes } from "./control/auth-session.js";
import { AUTH, CONTROL } from "./control/index.js";
import { invitationRoutes, membershipRoutes } from "./control/memberships.js";
import { organizationRoutes } from "./control/organizations.js";
import { passwordResetRoutes } from "./control/password-reset.js";
import { principalRoutes } from "./control/principal.js";
import { quotaRoutes } from "./control/quotas.js";
import { subjectLifecycleRoutes } from "./control/subject-lifecycle.js";
import { subjectRoutes } from "./control/subjects.js";
import { ORG_PREFIX } from "./control/wire.js";
import type { RouteDeps } from "./deps.js";
import { registerGuideRoutes } from "./guides.js";
import { under } from "./index.js";
import { agentRoutes, agentSetupRoutes } from "./interview/agent.js";
import { agentRealtimeRoutes } from "./interview/agent-realtime.js";
import { analyticsRoutes } from "./interview/analytics.js";
import { evaluationRoutes, resultRoutes } from "./interview/evaluations.js";
import { INTERVIEW } from "./interview/index.js";
import { participantRoutes } from "./interview/participant.js";
import { proposalRoutes } from "./interview/proposals.js";
import { realtimeRoutes } from "./interview/realtime.js";
import { registerRealtimeDocument } from "./interview/realtime-document.js";
import { bundleRoutes } from "./platform/bundles.js";
import { continuousRoutes } from "./platform/continuous.js";
import { PLATFORM } from "./platform/index.js";
import { templateRoutes } from "./platform/templates.js";
import { APP_PREFIX } from "./platform/wire.js";
import { webhookDeliveryRoutes } from "./webhooks/deliveries.js";
import { webhookEndpointActionRoutes } from "./webhooks/endpoint-actions.js";
import { webhookEndpointRoutes } from "./webhooks/endpoints.js";
import { webhookEventRoutes } from "./webhooks/events.js";
import { WEBHOOKS } from "./webhooks/index.js";
import { ApplicationError, ENV_PREFIX, ValidationError } from "./wire.js";

/**
 * Every route of the API, plane by plane: each plugin's plane, prefix and files of routes (the
 * control plane's first, with the sign-up, log-in and reset routes that lead to it); the named
 * schemas they share, the realtime doors' document and the guides.
 */
export async function registerRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  const planes = [CONTROL, PLATFORM, INTERVIEW, WEBHOOKS];
  for (const schema of [ApplicationError, ValidationError, ...planes.flatMap((plane) => plane.schemas)])
    app.addSchema(schema);
  // What every list route pages with (`route()` reads it from the plane's plugin).
  app.decorate("cursors", deps.cursors);
  await under(app, AUTH, "/auth", deps, [authSessionRoutes, passwordResetRoutes]);
  await under(app, CONTROL, "/v1", deps, [
    principalRoutes,
    activeOrganizationRoutes,
    organizationRoutes,
    invitationRoutes,
  ]);
  await under(app, CONTROL, ORG_PREFIX, deps, [membershipRoutes, auditRoutes, appRoutes]);
  await under(app, CONTROL, ENV_PREFIX, deps, [
    apiKeyRoutes,
    quotaRoutes,
    subjectRoutes,
    subjectLifecycleRoutes,
  ]);
  await under(app, PLATFORM, APP_PREFIX, deps, [templateRoutes, bundleRoutes]);
  await under(app, PLATFORM, ENV_PREFIX, deps, [continuousRoutes]);
  await under(app, INTERVIEW, ENV_PREFIX, deps, [
    evaluationRoutes,
    resultRoutes,
    analyticsRoutes,
    agentSetupRoutes,
  ]);
  await under(app, INTERVIEW, "/v1/participant", deps, [participantRoutes, proposalRoutes, realtimeRoutes]);
  await under(app, INTERVIEW, "/v1/agent", deps, [agentRoutes, agentRealtimeRoutes]);
  registerRealtimeDocument(app, deps.config);
  await under(app, WEBHOOKS, ENV_PREFIX, deps, [
    webhookEndpointRoutes,
    webhookEndpointActionRoutes,
    webhookDeliveryRoutes,
    webhookEventRoutes,
  ]);
  registerGuideRoutes(app);
}

import type { FastifyInstance } from "fastify";
import type { RouteDeps } from "../deps.js";
import { ENV_PREFIX } from "../environment.js";
import { under } from "../route.js";
import { activeOrganizationRoutes } from "./active-organization.js";
import { apiKeyRoutes } from "./api-keys.js";
import { appRoutes } from "./apps.js";
import { auditRoutes } from "./audit.js";
import { authSessionRoutes } from "./auth-session.js";
import { invitationRoutes, membershipRoutes } from "./memberships.js";
import { organizationRoutes } from "./organizations.js";
import { passwordResetRoutes } from "./password-reset.js";
import { principalRoutes } from "./principal.js";
import { quotaRoutes } from "./quotas.js";
import { ORG_PREFIX } from "./requests.js";
import { SubjectExport } from "./subject-export.js";
import { subjectLifecycleRoutes } from "./subject-lifecycle.js";
import { subjectRoutes } from "./subjects.js";
import { CONTROL_SCHEMAS } from "./wire.js";
import { SUBJECT_ERASURE_SCHEMAS } from "./wire-erasures.js";

/** The control plane's routes, and the sign-up, log-in and reset routes that lead to it. */
export async function registerControlRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  for (const schema of [...CONTROL_SCHEMAS, ...SUBJECT_ERASURE_SCHEMAS, SubjectExport]) app.addSchema(schema);
  await under(app, "/auth", (api) => {
    authSessionRoutes(api, deps);
    passwordResetRoutes(api, deps);
  });
  await under(app, "/v1", async (api) => {
    principalRoutes(api);
    activeOrganizationRoutes(api, deps);
    organizationRoutes(api, deps);
    invitationRoutes(api, deps);
  });
  await under(app, ORG_PREFIX, async (api) => {
    membershipRoutes(api, deps);
    auditRoutes(api, deps);
    await appRoutes(api, deps);
  });
  await under(app, ENV_PREFIX, (api) => {
    apiKeyRoutes(api, deps);
    quotaRoutes(api, deps);
    subjectRoutes(api, deps);
    subjectLifecycleRoutes(api, deps);
  });
}

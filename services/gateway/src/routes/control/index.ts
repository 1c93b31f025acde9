import type { FastifyInstance } from "fastify";
import { passwordResetRoutes } from "../auth/password-reset.js";
import { sessionRoutes } from "../auth/session.js";
import type { RouteDeps } from "../deps.js";
import { under } from "../route.js";
import { apiKeyRoutes } from "./api-keys.js";
import { appRoutes } from "./apps.js";
import { auditRoutes } from "./audit.js";
import { membershipRoutes } from "./memberships.js";
import { organizationRoutes } from "./organizations.js";
import { principalRoutes } from "./principal.js";
import { quotaRoutes } from "./quotas.js";
import { activeOrganizationRoutes } from "./session.js";
import { subjectRoutes } from "./subjects.js";
import { CONTROL_SCHEMAS } from "./wire.js";

/** The control plane's routes (and the sign-up, log-in and reset routes that lead to it). */
export async function registerControlRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  for (const schema of CONTROL_SCHEMAS) app.addSchema(schema);
  await under(app, "/v1", (api) => appRoutes(api, deps));
  sessionRoutes(app, deps);
  passwordResetRoutes(app, deps);
  principalRoutes(app);
  activeOrganizationRoutes(app, deps);
  organizationRoutes(app, deps);
  apiKeyRoutes(app, deps);
  membershipRoutes(app, deps);
  auditRoutes(app, deps);
  quotaRoutes(app, deps);
  subjectRoutes(app, deps);
}

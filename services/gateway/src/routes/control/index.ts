import type { FastifyInstance } from "fastify";
import type { RouteDeps } from "../deps.js";
import { type PlaneProse, type Prose, plane, under } from "../index.js";
import { ENV_PREFIX } from "../wire.js";
import { activeOrganizationRoutes } from "./active-organization.js";
import { apiKeyRoutes } from "./api-keys.js";
import { appRoutes } from "./apps.js";
import { auditRoutes } from "./audit.js";
import { authSessionRoutes } from "./auth-session.js";
import { invitationRoutes, membershipRoutes } from "./memberships.js";
import { organizationRoutes } from "./organizations.js";
import { passwordResetRoutes } from "./password-reset.js";
import { principalRoutes } from "./principal.js";
import prose from "./prose.json" with { type: "json" };
import { quotaRoutes } from "./quotas.js";
import { SubjectExport } from "./subject-export.js";
import { subjectLifecycleRoutes } from "./subject-lifecycle.js";
import { subjectRoutes } from "./subjects.js";
import { CONTROL_SCHEMAS, ORG_PREFIX } from "./wire.js";
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

/** The control plane's operations, by operationId: each is one route of the plane. */
export type ControlOperationId = keyof typeof prose;

/**
 * What `/openapi.json` says of each of the control plane's operations (prose.json, by operationId):
 * its summary, its description and what each success status means. The routes beside this file
 * declare the rest: a route's `id` is one of these (the compiler refuses one without its prose),
 * and a unit test finds the route of each.
 */
export const CONTROL_PROSE = prose satisfies Record<ControlOperationId, Prose>;

/** The control plane's tag, and its operations' prose (above). */
export const CONTROL: PlaneProse<ControlOperationId> = plane("control", CONTROL_PROSE);

/** The auth routes (sign-up, log-in, password resets): the control plane's, under their own tag. */
export const AUTH: PlaneProse<ControlOperationId> = { ...CONTROL, tag: "auth" };

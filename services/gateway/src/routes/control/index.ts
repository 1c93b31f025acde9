import type { FastifyInstance } from "fastify";
import type { RouteDeps } from "../deps.js";
import { type Api, plane, under } from "../index.js";
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
}

/**
 * The control plane's tag, and what `/openapi.json` says of each of its operations (prose.json, by
 * operationId): its summary, its description and what each success status means. The routes
 * beside this file declare the rest: a route's operation is one of these (the compiler refuses one
 * without its prose), and a unit test finds the route of each.
 */
export const CONTROL = plane("control", prose);

/** A plugin of the control plane's routes under `Prefix` (`under`): its routes' operations are the plane's. */
export type ControlApi<Prefix extends string> = Api<Prefix, keyof typeof prose>;

/** The auth routes (sign-up, log-in, password resets): the control plane's, under their own tag. */
export const AUTH: typeof CONTROL = { ...CONTROL, tag: "auth" };

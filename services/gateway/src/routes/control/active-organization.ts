import { Type } from "@sinclair/typebox";
import type { RouteDeps } from "../deps.js";
import { route } from "../index.js";
import { ref, Uuid } from "../wire.js";
import type { ControlApi } from "./index.js";
import {
  ActiveOrganization,
  activeOrganizationJson,
  SessionOrganizations,
  sessionOrganizationsJson,
  sessionRef,
} from "./wire.js";

/** A session's own read: access tokens and cookies only (an API key is 403). */
const SESSION = { auth: "session" } as const;

/** The session's scopes are its role in the active organization: what it had cached goes. */
const SWITCH = { auth: "session", idempotency: "optional", changesPrincipals: "credential" } as const;

/**
 * `GET/PUT /v1/session/active-organization`: which organization a session acts in, and `GET
 * /v1/session/organizations`: those it may switch to (sessions only).
 */
export function activeOrganizationRoutes(app: ControlApi<"/v1">, deps: RouteDeps): void {
  const auth = deps.upstreams.auth;

  route(app, "getActiveOrganization", "GET /session/active-organization", SESSION, {
    answer: ref(ActiveOrganization),
    rpc: (request, call) => auth.getActiveOrganization(sessionRef(request), call),
    json: activeOrganizationJson,
  });

  route(app, "setActiveOrganization", "PUT /session/active-organization", SWITCH, {
    body: Type.Object({ organization_id: Uuid }, { additionalProperties: false }),
    answer: ref(ActiveOrganization),
    rpc: (request, call) =>
      auth.setActiveOrganization(
        { ...sessionRef(request), organizationId: request.body.organization_id },
        call,
      ),
    json: activeOrganizationJson,
  });

  route(app, "listSessionOrganizations", "GET /session/organizations", SESSION, {
    answer: ref(SessionOrganizations),
    rpc: (request, call) => auth.listSessionOrganizations(sessionRef(request), call),
    json: sessionOrganizationsJson,
  });
}

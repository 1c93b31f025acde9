import { Type } from "@sinclair/typebox";
import type { RouteDeps } from "../deps.js";
import { type Api, route } from "../index.js";
import { ref, Uuid } from "../wire.js";
import { CONTROL } from "./index.js";
import {
  ActiveOrganization,
  activeOrganizationJson,
  SessionOrganizations,
  sessionOrganizationsJson,
  sessionRef,
} from "./wire.js";

/**
 * `GET/PUT /v1/session/active-organization`: which organization a session acts in, and `GET
 * /v1/session/organizations`: those it may switch to (sessions only).
 */
export function activeOrganizationRoutes(app: Api<"/v1">, deps: RouteDeps): void {
  const auth = deps.upstreams.auth;

  route(app, CONTROL, {
    id: "getActiveOrganization",
    method: "GET",
    path: "/session/active-organization",
    access: { auth: "session" },
    answer: ref(ActiveOrganization),
    rpc: (request, call) => auth.getActiveOrganization(sessionRef(request), call),
    json: activeOrganizationJson,
  });

  route(app, CONTROL, {
    id: "setActiveOrganization",
    method: "PUT",
    path: "/session/active-organization",
    // The session's scopes are its role in the active organization: what it had cached goes.
    access: { auth: "session", idempotency: "optional", changesPrincipals: "credential" },
    body: Type.Object({ organization_id: Uuid }, { additionalProperties: false }),
    answer: ref(ActiveOrganization),
    rpc: (request, call) =>
      auth.setActiveOrganization(
        { ...sessionRef(request), organizationId: request.body.organization_id },
        call,
      ),
    json: activeOrganizationJson,
  });

  route(app, CONTROL, {
    id: "listSessionOrganizations",
    method: "GET",
    path: "/session/organizations",
    access: { auth: "session" },
    answer: ref(SessionOrganizations),
    rpc: (request, call) => auth.listSessionOrganizations(sessionRef(request), call),
    json: sessionOrganizationsJson,
  });
}

import { Type } from "@sinclair/typebox";
import type { RouteDeps } from "../deps.js";
import { type Api, route } from "../route.js";
import { ref, Uuid } from "../schemas.js";
import { ActiveOrganization, activeOrganizationJson } from "./wire.js";

const TAG = "control";

/** `GET/PUT /v1/session/active-organization`: which organization a session acts in (sessions only). */
export function activeOrganizationRoutes(app: Api, deps: RouteDeps): void {
  const auth = deps.upstreams.auth;

  route(app, TAG, {
    method: "GET",
    url: "/session/active-organization",
    operationId: "getActiveOrganization",
    summary: "Get the active organization",
    description:
      "The organization the session acts in: its scopes are its role's there. Sessions only: " +
      "an API key gets 403.",
    access: { auth: "session" },
    response: ref(ActiveOrganization),
    responseDescription: "The session's active organization.",
    handler: async ({ request, call }) => {
      const answer = await auth.getActiveOrganization({ accessToken: request.credential ?? "" }, call);
      return activeOrganizationJson(answer);
    },
  });

  route(app, TAG, {
    method: "PUT",
    url: "/session/active-organization",
    operationId: "setActiveOrganization",
    summary: "Switch the active organization",
    description:
      "Makes another organization the user belongs to the session's active one; one they do not " +
      "belong to: 404. Sessions only: an API key gets 403. An Idempotency-Key is honoured when sent.",
    // The session's scopes are its role in the active organization: what it had cached goes.
    access: { auth: "session", idempotency: "optional", changesPrincipals: "credential" },
    body: Type.Object({ organization_id: Uuid }, { additionalProperties: false }),
    response: ref(ActiveOrganization),
    responseDescription: "The session's active organization, switched.",
    handler: async ({ request, call }) => {
      const answer = await auth.setActiveOrganization(
        { accessToken: request.credential ?? "", organizationId: request.body.organization_id },
        call,
      );
      return activeOrganizationJson(answer);
    },
  });
}

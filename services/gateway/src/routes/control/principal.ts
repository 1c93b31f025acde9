import { type Api, route } from "../route.js";
import { ref } from "../schemas.js";
import { AuthPrincipal, principalJson } from "./wire.js";

/** `GET /v1/auth/principal`: who the caller is and what it may do. */
export function principalRoutes(app: Api): void {
  route(app, "control", {
    method: "GET",
    url: "/auth/principal",
    operationId: "getAuthPrincipal",
    summary: "Get the caller",
    description:
      "Who the credential presented is (an access token or cookie, an API key or a legacy key) " +
      "and its scopes: for a session, its role's in the active organization. Participant and " +
      "agent tokens are no operator credential: 401.",
    access: { auth: "operator" },
    response: ref(AuthPrincipal),
    responseDescription: "The caller.",
    handler: async ({ request }) => {
      const principal = request.access?.principal;
      if (!principal) throw new Error("auth plugin did not run");
      return principalJson(principal);
    },
  });
}

import { type Api, route } from "../index.js";
import { ref } from "../wire.js";
import { CONTROL } from "./index.js";
import { AuthPrincipal, principalJson } from "./wire.js";

/** `GET /v1/auth/principal`: who the caller is and what it may do. */
export function principalRoutes(app: Api<"/v1">): void {
  route(app, CONTROL, {
    id: "getAuthPrincipal",
    method: "GET",
    path: "/auth/principal",
    access: { auth: "operator" },
    answer: ref(AuthPrincipal),
    handler: async ({ request }) => {
      const principal = request.access?.principal;
      if (!principal) throw new Error("auth plugin did not run");
      return principalJson(principal);
    },
  });
}

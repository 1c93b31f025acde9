import { route } from "../index.js";
import { ref } from "../wire.js";
import type { ControlApi } from "./index.js";
import { AuthPrincipal, principalJson } from "./wire.js";

/** Any operator credential may ask who it is: no scope. */
const OPERATOR = { auth: "operator" } as const;

/** `GET /v1/auth/principal`: who the caller is and what it may do. */
export function principalRoutes(app: ControlApi<"/v1">): void {
  route(app, "getAuthPrincipal", "GET /auth/principal", OPERATOR, {
    answer: ref(AuthPrincipal),
    handler: async ({ request }) => {
      const principal = request.access?.principal;
      if (!principal) throw new Error("auth plugin did not run");
      return principalJson(principal);
    },
  });
}

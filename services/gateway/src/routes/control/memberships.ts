import { ROLES } from "@evalp/kit";
import { Type } from "@sinclair/typebox";
import { StringEnum } from "../../validation/request-validator.js";
import type { RouteDeps } from "../deps.js";
import { resources } from "../resource.js";
import { type Api, route } from "../route.js";
import { ref } from "../schemas.js";
import { CONTROL } from "./plane.js";
import {
  InvitationAcceptance,
  invitationAcceptanceJson,
  MembershipBody,
  membershipJson,
  TokenAndPassword,
} from "./wire.js";

/** #2 `POST ORG/memberships`, `GET ORG/memberships` and #3 `POST /v1/invitations/accept`. */
export function membershipRoutes(app: Api<"/v1">, deps: RouteDeps): void {
  const memberships = deps.upstreams.memberships;
  const { list } = resources(app, CONTROL, deps.cursors);

  route(app, CONTROL, "createMembership", "POST /organizations/:organization_id/memberships", {
    access: { auth: "operator", scope: "org:admin", idempotency: "required", changesPrincipals: "all" },
    body: Type.Object(
      {
        email: Type.String({ minLength: 3, maxLength: 320, format: "email" }),
        role: Type.Optional(StringEnum(ROLES)),
      },
      { additionalProperties: false },
    ),
    status: 201,
    response: ref(MembershipBody),
    errors: [409],
    rpc: ({ params, body }, call) =>
      memberships.createMembership(
        { organizationId: params.organization_id, email: body.email, role: body.role ?? "member" },
        call,
      ),
    json: (answer) => membershipJson(answer.membership),
  });

  list("listMemberships", "GET /organizations/:organization_id/memberships", {
    scope: "org:read",
    item: MembershipBody,
    rpc: ({ params }, page, call) =>
      memberships.listMemberships({ organizationId: params.organization_id, page }, call),
  });

  route(app, CONTROL, "acceptInvitation", "POST /invitations/accept", {
    access: { auth: "none", idempotency: "required", changesPrincipals: "all", hashesPassword: true },
    body: TokenAndPassword,
    response: ref(InvitationAcceptance),
    errors: [410],
    rpc: ({ body }, call) => memberships.acceptInvitation(body, call),
    json: invitationAcceptanceJson,
  });
}

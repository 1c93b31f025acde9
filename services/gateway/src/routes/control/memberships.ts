import { ROLES } from "@evalp/kit";
import { Type } from "@sinclair/typebox";
import { pageOf } from "../../http/paging.js";
import { StringEnum } from "../../validation/request-validator.js";
import type { RouteDeps } from "../deps.js";
import { type Api, route } from "../route.js";
import { Page, PageQuery, ref } from "../schemas.js";
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
    handler: async ({ request, call }) => {
      const { email, role } = request.body;
      const answer = await memberships.createMembership(
        { organizationId: request.params.organization_id, email, role: role ?? "member" },
        call,
      );
      return membershipJson(answer.membership);
    },
  });

  route(app, CONTROL, "listMemberships", "GET /organizations/:organization_id/memberships", {
    access: { auth: "operator", scope: "org:read" },
    querystring: PageQuery,
    response: Page(MembershipBody, "MembershipPage"),
    handler: ({ request, call }) =>
      pageOf(
        request,
        deps.cursors,
        (page) => memberships.listMemberships({ organizationId: request.params.organization_id, page }, call),
        membershipJson,
      ),
  });

  route(app, CONTROL, "acceptInvitation", "POST /invitations/accept", {
    access: { auth: "none", idempotency: "required", changesPrincipals: "all", hashesPassword: true },
    body: TokenAndPassword,
    response: ref(InvitationAcceptance),
    errors: [410],
    handler: async ({ request, call }) => {
      const answer = await memberships.acceptInvitation(request.body, call);
      return invitationAcceptanceJson(answer);
    },
  });
}

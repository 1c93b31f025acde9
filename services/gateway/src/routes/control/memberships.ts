import { ROLES } from "@evalp/kit";
import { Type } from "@sinclair/typebox";
import { pageOf } from "../../http/paging.js";
import { StringEnum } from "../../validation/request-validator.js";
import type { RouteDeps } from "../deps.js";
import { type Api, route } from "../route.js";
import { OrgParams, Page, PageQuery, ref } from "../schemas.js";
import {
  InvitationAcceptance,
  invitationAcceptanceJson,
  MembershipBody,
  membershipJson,
  TokenAndPassword,
} from "./wire.js";

const TAG = "control";

/** #2 `POST ORG/memberships`, `GET ORG/memberships` and #3 `POST /v1/invitations/accept`. */
export function membershipRoutes(app: Api, deps: RouteDeps): void {
  const memberships = deps.upstreams.memberships;

  route(app, TAG, {
    method: "POST",
    url: "/organizations/:organization_id/memberships",
    operationId: "createMembership",
    summary: "Add a member",
    description:
      "Adds someone to the organization with a role (`member` unless given). Unless they are " +
      "already an active user, they are mailed an invitation token valid 7 days, and the " +
      "membership stays `invited` until it is accepted. Someone already a member: 409 " +
      "`already_exists`. Requires `org:admin` and an Idempotency-Key.",
    access: { auth: "operator", scope: "org:admin", idempotency: "required", changesPrincipals: "all" },
    params: OrgParams,
    body: Type.Object(
      {
        email: Type.String({ minLength: 3, maxLength: 320, format: "email" }),
        role: Type.Optional(StringEnum(ROLES)),
      },
      { additionalProperties: false },
    ),
    status: 201,
    response: ref(MembershipBody),
    responseDescription: "The membership, created.",
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

  route(app, TAG, {
    method: "GET",
    url: "/organizations/:organization_id/memberships",
    operationId: "listMemberships",
    summary: "List members",
    description:
      "The organization's members and invitees, newest first, a page at a time (docs/paging.md). " +
      "Requires `org:read`.",
    access: { auth: "operator", scope: "org:read" },
    params: OrgParams,
    querystring: PageQuery,
    response: Page(MembershipBody, "MembershipPage"),
    responseDescription: "A page of memberships.",
    handler: ({ request, call }) =>
      pageOf(
        request,
        deps.cursors,
        (page) => memberships.listMemberships({ organizationId: request.params.organization_id, page }, call),
        membershipJson,
      ),
  });

  route(app, TAG, {
    method: "POST",
    url: "/invitations/accept",
    operationId: "acceptInvitation",
    summary: "Accept an invitation",
    description:
      "Accepts an invitation with its mailed token (single use) and sets the user's password; " +
      "the membership becomes `active`. An unknown token: 404 `not_found`; one past its 7 days " +
      "or already used: 410 `invitation_expired`. Needs no credential, but an Idempotency-Key.",
    access: { auth: "none", idempotency: "required", changesPrincipals: "all", hashesPassword: true },
    body: TokenAndPassword,
    response: ref(InvitationAcceptance),
    responseDescription: "The membership the invitation activated.",
    errors: [410],
    handler: async ({ request, call }) => {
      const answer = await memberships.acceptInvitation(request.body, call);
      return invitationAcceptanceJson(answer);
    },
  });
}

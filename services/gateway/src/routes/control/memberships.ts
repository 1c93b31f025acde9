import { ROLES } from "@evalp/kit";
import type { Membership } from "@evalp/proto/control/v1/membership";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { callOptions } from "../../http/call.js";
import { pageBody, pageRequest } from "../../http/paging.js";
import { iso } from "../../http/timestamps.js";
import { StringEnum } from "../../validation/request-validator.js";
import type { RouteDeps } from "../deps.js";
import {
  COMMON_ERRORS,
  DateTime,
  ErrorBody,
  IdempotentHeaders,
  OrgParams,
  Page,
  PageQuery,
  Uuid,
} from "../schemas.js";

const MembershipBody = Type.Object(
  {
    id: Uuid,
    organization_id: Uuid,
    user_id: Uuid,
    email: Type.String(),
    role: StringEnum(ROLES),
    status: StringEnum(["invited", "active"]),
    created_at: DateTime,
    updated_at: DateTime,
  },
  { title: "Membership" },
);

function membershipJson(membership: Membership | undefined) {
  if (!membership) throw new Error("upstream returned no membership");
  return {
    id: membership.id,
    organization_id: membership.organizationId,
    user_id: membership.userId,
    email: membership.email,
    role: membership.role,
    status: membership.status,
    created_at: iso(membership.createdAt),
    updated_at: iso(membership.updatedAt),
  };
}

const ORG = "/v1/organizations/:organization_id";

/** #2 `POST ORG/memberships`, `GET ORG/memberships` and #3 `POST /v1/invitations/accept`. */
export function membershipRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.post(
    `${ORG}/memberships`,
    {
      config: {
        access: { auth: "operator", scope: "org:admin", idempotency: "required", changesPrincipals: "all" },
      },
      schema: {
        tags: ["control"],
        summary: "Add a member; someone without an account is mailed a 7-day invitation",
        params: OrgParams,
        headers: IdempotentHeaders,
        body: Type.Object(
          {
            email: Type.String({ minLength: 3, maxLength: 320, format: "email" }),
            role: Type.Optional(StringEnum(ROLES)),
          },
          { additionalProperties: false },
        ),
        response: { 201: MembershipBody, 409: ErrorBody, ...COMMON_ERRORS },
      },
    },
    async (request, reply) => {
      const { organization_id } = request.params as { organization_id: string };
      const body = request.body as { email: string; role?: string };
      const answer = await deps.upstreams.memberships.createMembership(
        { organizationId: organization_id, email: body.email, role: body.role ?? "member" },
        callOptions(request),
      );
      return reply.code(201).send(membershipJson(answer.membership));
    },
  );

  app.get(
    `${ORG}/memberships`,
    {
      config: { access: { auth: "operator", scope: "org:read" } },
      schema: {
        tags: ["control"],
        summary: "List members and invitees, newest first",
        params: OrgParams,
        querystring: PageQuery,
        response: { 200: Page(MembershipBody, "MembershipPage"), ...COMMON_ERRORS },
      },
    },
    async (request) => {
      const { organization_id } = request.params as { organization_id: string };
      const page = pageRequest(request, deps.cursors, request.query as { limit?: number; cursor?: string });
      const answer = await deps.upstreams.memberships.listMemberships(
        { organizationId: organization_id, page },
        callOptions(request),
      );
      return pageBody(request, deps.cursors, answer.items.map(membershipJson), answer.page);
    },
  );

  app.post(
    "/v1/invitations/accept",
    {
      config: {
        access: { auth: "none", idempotency: "required", changesPrincipals: "all", hashesPassword: true },
      },
      schema: {
        tags: ["control"],
        summary: "Accept an invitation (single use) and set the password",
        headers: IdempotentHeaders,
        body: Type.Object(
          {
            token: Type.String({ minLength: 1, maxLength: 512 }),
            password: Type.String({ minLength: 8, maxLength: 256 }),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object(
            { membership_id: Uuid, organization_id: Uuid, role: Type.String(), user_id: Uuid },
            { title: "InvitationAcceptance" },
          ),
          404: ErrorBody,
          410: ErrorBody,
          422: COMMON_ERRORS[422],
        },
      },
    },
    async (request) => {
      const body = request.body as { token: string; password: string };
      const answer = await deps.upstreams.memberships.acceptInvitation(body, callOptions(request));
      return {
        membership_id: answer.membershipId,
        organization_id: answer.organizationId,
        role: answer.role,
        user_id: answer.userId,
      };
    },
  );
}

import { ROLES } from "@evalp/kit";
import { Type } from "@sinclair/typebox";
import { StringEnum } from "../../validation/request-validator.js";
import type { RouteDeps } from "../deps.js";
import { reads, route } from "../index.js";
import { pageOfItems, ref } from "../wire.js";
import type { ControlApi } from "./index.js";
import {
  InvitationAcceptance,
  invitationAcceptanceJson,
  MembershipBody,
  membershipJson,
  type ORG_PREFIX,
  organizationRef,
  TokenAndPassword,
} from "./wire.js";

/**
 * An invitation is an admin's, signed in (an API key is 403). No principal changes here: an
 * `invited` membership reaches nothing until it is accepted (acceptInvitation forgets the
 * principals then).
 */
const INVITES = { auth: "session", scope: "org:admin", idempotency: "required" } as const;

/**
 * Accepting needs the mailed token, not a credential; it may set a password, and the gateway
 * cannot tell whose credentials it changes.
 */
const ACCEPTS = {
  auth: "none",
  idempotency: "required",
  changesPrincipals: "all",
  hashesPassword: true,
} as const;

/**
 * #2 `POST ORG/memberships` and `GET ORG/memberships`. Inviting is for signed-in people only (an
 * API key is 403): control checks the role asked for against the inviter's own.
 */
export function membershipRoutes(app: ControlApi<typeof ORG_PREFIX>, deps: RouteDeps): void {
  const memberships = deps.upstreams.memberships;
  route(app, "createMembership", "POST /memberships", INVITES, {
    body: Type.Object(
      {
        email: Type.String({ minLength: 3, maxLength: 320, format: "email" }),
        role: Type.Optional(StringEnum(ROLES)),
      },
      { additionalProperties: false },
    ),
    answer: ref(MembershipBody),
    handler: async ({ request, call }) => {
      const { params, body, access } = request;
      // Counted before control mails anything; a refused invitation counts too, as attempts do.
      await deps.attempts.checkInvitation(
        params.organization_id,
        deps.config.INVITATIONS_PER_ORGANIZATION_PER_HOUR,
      );
      const answer = await memberships.createMembership(
        {
          ...organizationRef(params),
          email: body.email,
          role: body.role ?? "member",
          // A session principal always has its user (`auth: "session"`); control refuses none.
          inviterUserId: access?.principal.userId ?? "",
        },
        call,
      );
      return membershipJson(answer.membership);
    },
  });

  route(app, "listMemberships", "GET /memberships", reads("org:read"), {
    answer: pageOfItems(MembershipBody),
    list: ({ params }, page, call) => memberships.listMemberships({ ...organizationRef(params), page }, call),
    item: membershipJson,
  });
}

/** #3 `POST /v1/invitations/accept`: an invited user joins with the token mailed to them. */
export function invitationRoutes(app: ControlApi<"/v1">, deps: RouteDeps): void {
  const memberships = deps.upstreams.memberships;

  route(app, "acceptInvitation", "POST /invitations/accept", ACCEPTS, {
    body: TokenAndPassword,
    answer: ref(InvitationAcceptance),
    // 401: an existing account's invitation accepted with another password than the account's.
    rpc: ({ body }, call) => memberships.acceptInvitation(body, call),
    json: invitationAcceptanceJson,
  });
}

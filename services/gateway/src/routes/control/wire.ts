import { QUOTA_COUNTERS, type QuotaCounter, quotaValues, ROLES } from "@evalp/kit";
import type { LoginResponse, SignupResponse } from "@evalp/proto/control/v1/auth";
import type { Quotas } from "@evalp/proto/control/v1/quota";
import type { ImportSubjectsResponse } from "@evalp/proto/control/v1/subject";
import { type ObjectOptions, type TObject, type TSchema, Type } from "@sinclair/typebox";
import { StringEnum } from "../../validation/request-validator.js";
import {
  DateTime,
  type EnvPath,
  environmentRef,
  FreeObject,
  named,
  nullable,
  OneOf,
  ref,
  required,
  Uuid,
  wireOf,
} from "../wire.js";

// The control plane's resources on the wire: their schemas (named components of the document)
// and the mappers from the RPC messages.

/** A membership's statuses: `invited` until the invitation is accepted, then `active`. */
export const MEMBERSHIP_STATUSES = ["invited", "active"] as const;

/** A new password (sign-up, reset, invitation). */
export const Password = Type.String({ minLength: 8, maxLength: 256 });

/** A mailed single-use token and the password it lets one set (reset, invitation). */
export const TokenAndPassword = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 512 }), password: Password },
  { additionalProperties: false },
);

/** Slugs of apps and environments (docs/endpoints.md). */
export const Slug = Type.String({ pattern: "^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$" });

export const Application = Type.Object(
  {
    id: Uuid,
    organization_id: Uuid,
    slug: Type.String(),
    name: Type.String(),
    description: nullable(Type.String()),
    created_at: DateTime,
  },
  named("App", "An app of an organization (docs/endpoints.md)."),
);

export const appJson = wireOf(Application);

export const EnvironmentBody = Type.Object(
  { id: Uuid, app_id: Uuid, slug: Type.String(), name: Type.String(), created_at: DateTime },
  named("Environment", "An environment of an app (docs/endpoints.md)."),
);

export const environmentJson = wireOf(EnvironmentBody);

export const OrganizationBody = Type.Object(
  { id: Uuid, name: Type.String(), created_at: DateTime },
  named("Organization", "An organization: the tenant."),
);

export const organizationJson = wireOf(OrganizationBody);

export const MembershipBody = Type.Object(
  {
    id: Uuid,
    organization_id: Uuid,
    user_id: Uuid,
    email: Type.String(),
    role: OneOf(ROLES),
    status: OneOf(MEMBERSHIP_STATUSES, {
      description: "`invited` until the invitation is accepted, then `active`.",
    }),
    created_at: DateTime,
    updated_at: DateTime,
  },
  named("Membership", "A member, or an invitee, of an organization."),
);

export const membershipJson = wireOf(MembershipBody);

export const InvitationAcceptance = Type.Object(
  { membership_id: Uuid, organization_id: Uuid, role: Type.String(), user_id: Uuid },
  named("InvitationAcceptance", "An accepted invitation: the membership it activated."),
);

export const invitationAcceptanceJson = wireOf(InvitationAcceptance);

const apiKeyProperties = {
  id: Uuid,
  environment_id: Uuid,
  name: Type.String(),
  key_prefix: Type.String({ description: "`evk_` and the key's first 8 characters." }),
  scopes: Type.Array(Type.String()),
  created_at: DateTime,
  revoked_at: nullable(DateTime),
};

export const ApiKeySummary = Type.Object(
  apiKeyProperties,
  named("ApiKey", "An API key of an environment, without its secret."),
);

export const ApiKeyCreated = Type.Object(
  { ...apiKeyProperties, secret: Type.String({ description: "The whole key; shown in this answer only." }) },
  named("ApiKeyCreated", "A new API key and its secret."),
);

export const apiKeyJson = wireOf(ApiKeySummary);

export const AuditEventBody = Type.Object(
  {
    id: Uuid,
    organization_id: Uuid,
    app_id: nullable(Uuid),
    environment_id: nullable(Uuid),
    actor_kind: Type.String(),
    actor_id: Type.String(),
    action: Type.String(),
    resource_type: Type.String(),
    resource_id: Type.String(),
    request_id: nullable(Type.String()),
    metadata: FreeObject,
    created_at: DateTime,
  },
  named("AuditEvent", "A record of a change to the organization."),
);

export const auditEventJson = wireOf(AuditEventBody);

/** An object of the seven counters, each described by `schema`. */
export function counters<T extends TSchema>(schema: () => T, options?: ObjectOptions) {
  const properties = Object.fromEntries(QUOTA_COUNTERS.map((name) => [name, schema()]));
  return Type.Object(properties as Record<QuotaCounter, T>, options) as TObject<Record<QuotaCounter, T>>;
}

export const QuotaCountersBody = counters(
  () => Type.Integer(),
  named("QuotaCounters", "A value per quota counter."),
);

export const QuotasBody = Type.Object(
  {
    environment_id: Uuid,
    limits: ref(QuotaCountersBody),
    usage: ref(QuotaCountersBody),
    revision: Type.Integer(),
    schema_version: Type.Integer(),
  },
  named("EnvironmentQuotas", "An environment's limits and their usage (docs/endpoints.md)."),
);

export function quotasJson(message: Quotas | undefined) {
  const quotas = required(message, "quotas");
  return {
    environment_id: quotas.environmentId,
    limits: quotaValues(quotas.limits),
    usage: quotaValues(quotas.usage),
    revision: quotas.revision,
    schema_version: quotas.schemaVersion,
  };
}

export const SubjectBody = Type.Object(
  {
    id: Uuid,
    environment_id: Uuid,
    external_id: Type.String(),
    identity_mode: Type.String(),
    profile: FreeObject,
    created_at: DateTime,
    updated_at: DateTime,
  },
  named("Subject", "A person evaluated in an environment."),
);

export const subjectJson = wireOf(SubjectBody);

export const SubjectImport = Type.Object(
  {
    batch_id: Uuid,
    idempotent_replay: Type.Boolean(),
    receipts: Type.Array(
      Type.Object({ item_index: Type.Integer(), subject_id: Type.String(), error_code: Type.String() }),
      { description: "One per item: its `subject_id`, or its `error_code`." },
    ),
  },
  named("SubjectImport", "The outcome of a subject import."),
);

export function subjectImportJson(answer: ImportSubjectsResponse) {
  return {
    batch_id: answer.batchId,
    // The idempotency plugin sets it on a replayed answer (docs/idempotency.md).
    idempotent_replay: false,
    receipts: answer.receipts.map(({ itemIndex, subjectId, errorCode }) => ({
      item_index: itemIndex,
      subject_id: subjectId,
      error_code: errorCode,
    })),
  };
}

export const ProgramBody = Type.Object(
  { id: Uuid, environment_id: Uuid, name: Type.String(), created_at: DateTime },
  named("Program", "A program subjects answer in."),
);

export const programJson = wireOf(ProgramBody);

export const AuthPrincipal = Type.Object(
  {
    kind: StringEnum(["api_key", "session", "legacy"]),
    principal_id: Type.String(),
    scopes: Type.Array(Type.String()),
    api_key_name: nullable(Type.String()),
    email: nullable(Type.String()),
  },
  named("AuthPrincipal", "Who a caller is and what it may do."),
);

export const principalJson = wireOf(AuthPrincipal);

export const ActiveOrganization = Type.Object(
  { organization_id: Type.String() },
  named("ActiveOrganization", "The organization a session acts in."),
);

export const activeOrganizationJson = wireOf(ActiveOrganization);

export const SessionOrganizations = Type.Object(
  {
    items: Type.Array(Type.Object({ organization_id: Uuid, name: Type.String(), role: Type.String() })),
  },
  named("SessionOrganizations", "The organizations a session's user belongs to: those it may switch to."),
);

export const sessionOrganizationsJson = wireOf(SessionOrganizations);

export const SignupResult = Type.Object(
  { user_id: Uuid, organization_id: Uuid, access_token: Type.String(), expires_at: DateTime },
  named("SignupResult", "The new user, their organization and a first access token."),
);

export const AccessToken = Type.Object(
  { access_token: Type.String(), token_type: Type.Literal("bearer"), expires_at: DateTime },
  named("AccessToken", "An access token of a new session (12 h)."),
);

/** A sign-up's answer; `expires_at` as the session cookie was given it. */
export function signupJson(answer: SignupResponse, expiresAt: string) {
  const { userId, organizationId, accessToken } = answer;
  return {
    user_id: userId,
    organization_id: organizationId,
    access_token: accessToken,
    expires_at: expiresAt,
  };
}

/** A log-in's answer; `expires_at` as the session cookie was given it. */
export function accessTokenJson(answer: LoginResponse, expiresAt: string) {
  return { access_token: answer.accessToken, token_type: "bearer" as const, expires_at: expiresAt };
}

/** The named schemas of this plane, registered once with the app (components of the document). */
export const CONTROL_SCHEMAS = [
  Application,
  EnvironmentBody,
  OrganizationBody,
  MembershipBody,
  InvitationAcceptance,
  ApiKeySummary,
  ApiKeyCreated,
  AuditEventBody,
  QuotaCountersBody,
  QuotasBody,
  SubjectBody,
  SubjectImport,
  ProgramBody,
  AuthPrincipal,
  ActiveOrganization,
  SessionOrganizations,
  SignupResult,
  AccessToken,
];

// What the control plane's requests carry: the resources a path names, as its RPCs take them.

/** Where an organization's resources live (the ORG prefix of the contract). */
export const ORG_PREFIX = "/v1/organizations/:organization_id";

/** The path parameters of an ORG route. */
export type OrgPath = { organization_id: string };

/** The wire form of an ORG path, as the control plane's RPCs take it. */
export function organizationRef(params: OrgPath) {
  return { organizationId: params.organization_id };
}

/** Path parameters of `ENV/subjects/:subject_id/…`. */
export type SubjectPath = EnvPath & { subject_id: string };

/** A subject as the control plane's RPCs name it: its environment's path and its id. */
export function subjectRef(params: SubjectPath) {
  return { environment: environmentRef(params), subjectId: params.subject_id };
}

/** The session a request's credential is (sessions only: the auth plugin verified it). */
export function sessionRef(request: { credential?: string }) {
  return { accessToken: request.credential ?? "" };
}

import { type Plane, type Prose, plane } from "../route.js";

/** The control plane's operations, by operationId: each is one route of the plane. */
export type ControlOperationId =
  | "signUp"
  | "logIn"
  | "logOut"
  | "requestPasswordReset"
  | "confirmPasswordReset"
  | "getAuthPrincipal"
  | "getActiveOrganization"
  | "setActiveOrganization"
  | "createOrganization"
  | "getOrganization"
  | "createMembership"
  | "listMemberships"
  | "acceptInvitation"
  | "listAuditEvents"
  | "createApp"
  | "listApps"
  | "getApp"
  | "createEnvironment"
  | "listEnvironments"
  | "createApiKey"
  | "listApiKeys"
  | "revokeApiKey"
  | "getQuotas"
  | "updateQuotas"
  | "importSubjects"
  | "getSubject"
  | "createProgram"
  | "listPrograms"
  | "listSubjects"
  | "eraseSubject"
  | "getSubjectErasure"
  | "exportSubject";

/**
 * What `/openapi.json` says of each of the control plane's operations: its summary, its
 * description and what each success status means. The routes beside this file declare the rest;
 * the compiler holds the two together (an operation without its prose, or prose without its
 * operation, does not build).
 */
export const CONTROL_PROSE = {
  signUp: {
    summary: "Sign up",
    description:
      "Creates a user, their organization (the user is its owner) and a first access token, which is also set as the session cookie. An email already taken: 409 `already_exists`. 404 when sign-up is turned off. Needs no credential; an Idempotency-Key is honoured when sent.",
    responses: { 201: "The user and organization, created, and an access token." },
  },
  logIn: {
    summary: "Log in",
    description:
      "Exchanges an email and password for an access token (12 h), also set as the session cookie. A wrong email or password: 401 `invalid_credentials`. Attempts are limited per email and per client address (429). Needs no credential; an Idempotency-Key is honoured when sent.",
    responses: { 200: "A new session's access token." },
  },
  logOut: {
    summary: "Log out",
    description:
      "Revokes the access token presented (bearer or cookie) and clears the cookie. Sessions only: an API key gets 403. An Idempotency-Key is honoured when sent.",
    responses: { 204: "The session has ended." },
  },
  requestPasswordReset: {
    summary: "Request a password reset",
    description:
      "Mails a reset link (valid 1 h) when the email belongs to an account, and answers 202 either way, so the answer tells nothing of who has an account. Requests are limited per email and per client address (429). Needs no credential; an Idempotency-Key is honoured when sent.",
    responses: { 202: "The request is taken (whether or not the email is known)." },
  },
  confirmPasswordReset: {
    summary: "Set a new password",
    description:
      "Sets a new password with a reset token (single use) and revokes every session of the user. An unknown token: 404 `not_found`; one past its life or already used: 410 `reset_token_expired`. Needs no credential; an Idempotency-Key is honoured when sent.",
    responses: { 200: "The password is set; the user must log in again." },
  },
  getAuthPrincipal: {
    summary: "Get the caller",
    description:
      "Who the credential presented is (an access token or cookie, an API key or a legacy key) and its scopes: for a session, its role's in the active organization. Participant and agent tokens are no operator credential: 401.",
    responses: { 200: "The caller." },
  },
  getActiveOrganization: {
    summary: "Get the active organization",
    description:
      "The organization the session acts in: its scopes are its role's there. Sessions only: an API key gets 403.",
    responses: { 200: "The session's active organization." },
  },
  setActiveOrganization: {
    summary: "Switch the active organization",
    description:
      "Makes another organization the user belongs to the session's active one; one they do not belong to: 404. Sessions only: an API key gets 403. An Idempotency-Key is honoured when sent.",
    responses: { 200: "The session's active organization, switched." },
  },
  createOrganization: {
    summary: "Create an organization",
    description:
      "Creates an organization whose owner is the calling user. Sessions only: an API key gets 403. An Idempotency-Key is honoured when sent.",
    responses: { 201: "The organization, created." },
  },
  getOrganization: {
    summary: "Get an organization",
    description: "One organization the caller reaches. Requires `org:read`.",
    responses: { 200: "The organization." },
  },
  createMembership: {
    summary: "Add a member",
    description:
      "Invites someone into the organization with a role (`member` unless given): they are mailed an invitation token valid 7 days, and the membership stays `invited` until it is accepted. The answer and the mail are the same whether or not the email has an account; nobody joins without accepting. Someone already a member or invited: 409 `already_exists`. Only signed-in users invite (an API key: 403 `forbidden`), and never to a role above their own (403 `forbidden`, `reason` `role_above_inviter`). An organization sends at most INVITATIONS_PER_ORGANIZATION_PER_HOUR invitations an hour (429 `rate_limited`). Requires `org:admin` and an Idempotency-Key.",
    responses: { 201: "The membership, created (status `invited`)." },
  },
  listMemberships: {
    summary: "List members",
    description:
      "The organization's members and invitees, newest first, a page at a time (docs/paging.md). Requires `org:read`.",
    responses: { 200: "A page of memberships." },
  },
  acceptInvitation: {
    summary: "Accept an invitation",
    description:
      "Accepts an invitation with its mailed token (single use); the membership becomes `active`. A person without an account sets their password with it; a person with one gives that account's password, which stays as it is (another password: 401 `invalid_credentials`, the invitation stays usable). An unknown token: 404 `not_found`; one past its 7 days or already used: 410 `invitation_expired`. Needs no credential, but an Idempotency-Key.",
    responses: { 200: "The membership the invitation activated." },
  },
  listAuditEvents: {
    summary: "List audit events",
    description:
      "The organization's audit trail: a record of every change made in it, with who made it and the request's id, newest first, a page at a time (docs/paging.md), filtered by `action` and `resource_type` when given. Requires `audit:read`.",
    responses: { 200: "A page of audit events." },
  },
  createApp: {
    summary: "Create an app",
    description:
      "Creates an app in the organization. Its slug is unique within the organization (409 `already_exists` otherwise). Requires `apps:write` and an Idempotency-Key.",
    responses: { 201: "The app, created." },
  },
  listApps: {
    summary: "List apps",
    description:
      "The organization's apps, newest first, a page at a time (docs/paging.md). Requires `org:read`.",
    responses: { 200: "A page of apps." },
  },
  getApp: {
    summary: "Get an app",
    description: "One app of the organization. Requires `org:read`.",
    responses: { 200: "The app." },
  },
  createEnvironment: {
    summary: "Create an environment",
    description:
      "Creates an environment of the app, with the default quotas. Its slug is unique within the app (409 `already_exists` otherwise). Requires `apps:write` and an Idempotency-Key.",
    responses: { 201: "The environment, created." },
  },
  listEnvironments: {
    summary: "List environments",
    description:
      "The app's environments, newest first, a page at a time (docs/paging.md). Requires `org:read`.",
    responses: { 200: "A page of environments." },
  },
  createApiKey: {
    summary: "Create an API key",
    description:
      "Creates an API key of the environment with the scopes given; the whole key is in this answer only, as `secret`. A key cannot have a scope its creator lacks (403 `forbidden`), and `interviews:agent` is granted alone (422). Requires `keys:write` and an Idempotency-Key.",
    responses: { 201: "The key, created, with its secret." },
  },
  listApiKeys: {
    summary: "List API keys",
    description:
      "The environment's API keys, revoked ones included, newest first, a page at a time (docs/paging.md); never their secrets. Requires `keys:write`.",
    responses: { 200: "A page of API keys." },
  },
  revokeApiKey: {
    summary: "Revoke an API key",
    description:
      "Revokes the key at once: from then on it gets 401 `api_key_revoked`. Requires `keys:write` and an Idempotency-Key.",
    responses: { 200: "The key, revoked." },
  },
  getQuotas: {
    summary: "Get the quotas",
    description:
      "The environment's seven limits and their usage, with the `revision` a change must name. Requires `org:read`.",
    responses: { 200: "The environment's quotas." },
  },
  updateQuotas: {
    summary: "Update the quotas",
    description:
      "Replaces all seven limits and adds 1 to `revision`. `expected_revision` must be the current one, else 409 `revision_conflict` (with both revisions in `context`). A limit below its usage is allowed: it blocks new creations only. Requires `quotas:write` and an Idempotency-Key.",
    responses: { 200: "The quotas, updated." },
  },
  importSubjects: {
    summary: "Import subjects",
    description:
      "Upserts up to 100 subjects by `external_id`: a known one keeps its id and takes the new profile. Each item gets a receipt: its `subject_id`, or an `error_code` (`quota_exceeded`, or `duplicate_in_batch` for a later item repeating an `external_id`). Requires `subjects:write` and an Idempotency-Key.",
    responses: { 200: "A receipt per item." },
  },
  getSubject: {
    summary: "Get a subject",
    description:
      "One subject of the environment. An erased subject answers 404 `subject_erased` (with `subject_id` and `erased_at` in `context`). Requires `subjects:read`.",
    responses: { 200: "The subject." },
  },
  createProgram: {
    summary: "Create a program",
    description:
      "Creates a program of the environment. It counts against the `programs` quota: 409 `quota_exceeded` past it. Requires `subjects:write` and an Idempotency-Key.",
    responses: { 201: "The program, created." },
  },
  listPrograms: {
    summary: "List programs",
    description:
      "The environment's programs, newest first, a page at a time (docs/paging.md). Requires `org:read`.",
    responses: { 200: "A page of programs." },
  },
  listSubjects: {
    summary: "List subjects",
    description:
      "The environment's subjects, newest first, a page at a time (docs/paging.md); `external_id` keeps the one subject with that external id. Erased subjects are not listed. Requires `subjects:read`.",
    responses: { 200: "A page of subjects." },
  },
  eraseSubject: {
    summary: "Erase a subject",
    description:
      "Erases everything every plane keeps about the subject (docs/subjects.md#erasure): the profile and external id at once (the id remains, and reads answer 404 `subject_erased`), then, driven by the `subject.erasure_requested` event, interviews and their transcripts, behavioral events and participant sessions, continuous answers, and the stored payloads of webhook events about the subject. An interview in progress is ended first (`ended_incomplete`, `ended_reason` `subject_erased`) and its sockets are closed. `subject.erased` is emitted once every plane is done. It cannot be undone; asking again answers the erasure as it stands. Requires `subjects:write` and an Idempotency-Key.",
    responses: { 202: "The erasure is under way." },
  },
  getSubjectErasure: {
    summary: "Get a subject's erasure",
    description:
      "Where the subject's erasure stands, plane by plane; `status` is `completed` once every plane is done. A subject never erased: 404 `not_found` (`resource` `subject_erasure`). Requires `subjects:read`.",
    responses: { 200: "The erasure's state." },
  },
  exportSubject: {
    summary: "Export a subject",
    description:
      "One JSON document of everything every plane keeps about the subject (docs/subjects.md#export): the profile, its evaluations with their interviews, entries (the transcript) and behavioral events, its continuous answers, and the webhook deliveries of the events that named it (ids, types, times, status; no payload). The body is streamed as it is read: a failure midway ends it early, and the JSON does not parse. Another environment's subject or an unknown id: 404 `not_found`; an erased subject: 404 `subject_erased`. Requires `subjects:read`.",
    responses: { 200: "The subject's data." },
  },
} satisfies Record<ControlOperationId, Prose>;

/** The control plane's tag, and its operations' prose (above). */
export const CONTROL: Plane<ControlOperationId> = plane("control", CONTROL_PROSE);

/** The auth routes (sign-up, log-in, password resets): the control plane's, under their own tag. */
export const AUTH: Plane<ControlOperationId> = { ...CONTROL, tag: "auth" };

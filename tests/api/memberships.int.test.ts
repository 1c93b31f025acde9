import { beforeAll, describe, expect, it } from "vitest";
import type { ApiClient } from "./support/client.js";
import { createKey, createTenant, expectError, ik, signUp, type Tenant } from "./support/fixtures.js";
import { inviteColleague, sentMail, tokenIn } from "./support/mail.js";
import { type Stack, useStack } from "./support/stack.js";

/** Invitations an organization may send an hour, here (the tenant of most tests sends fewer). */
const INVITATIONS_PER_HOUR = 20;
const context = useStack({ INVITATIONS_PER_ORGANIZATION_PER_HOUR: String(INVITATIONS_PER_HOUR) });
let stack: Stack;
let api: ApiClient;
let tenant: Tenant;

beforeAll(async () => {
  ({ stack, api } = context);
  tenant = await createTenant(api);
});

const mailTo = (email: string) => sentMail(stack.config.MAIL_DIR).filter((mail) => mail.to === email);

describe("POST ORG/memberships (#2) and POST /v1/invitations/accept (#3)", () => {
  it("invites a new person by mail; the invitee accepts, logs in at once and acts with the role's scopes", async () => {
    const email = "grace@example.com";
    const invited = await api.post(
      `${tenant.org}/memberships`,
      { email, role: "viewer" },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(invited.status).toBe(201);
    expect(invited.body).toEqual({
      id: expect.any(String),
      organization_id: tenant.organizationId,
      user_id: expect.any(String),
      email,
      role: "viewer",
      status: "invited",
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const [mail] = mailTo(email);
    expect(mail?.text).toContain(`${stack.config.PUBLIC_URL.replace(/:\d+$/, "")}`);
    expect(mail?.text).toMatch(/\/accept-invitation\?token=/);
    const token = tokenIn(mail);

    const accepted = await api.post(
      "/v1/invitations/accept",
      { token, password: "grace's password" },
      { idempotencyKey: ik() },
    );
    expect(accepted.status).toBe(200);
    expect(accepted.body).toEqual({
      membership_id: invited.body.id,
      organization_id: tenant.organizationId,
      role: "viewer",
      user_id: invited.body.user_id,
    });

    const login = await api.post("/auth/login", { email, password: "grace's password" });
    expect(login.status).toBe(200);
    const viewer = login.body.access_token as string;
    expect((await api.get(tenant.org, { token: viewer })).status).toBe(200);
    const denied = await api.post(
      `${tenant.org}/apps`,
      { slug: "x", name: "X" },
      { token: viewer, idempotencyKey: ik() },
    );
    expect(expectError(denied, 403, "forbidden").context).toEqual({ required_scope: "apps:write" });

    const members = await api.get(`${tenant.org}/memberships`, { token: tenant.token });
    expect(members.status).toBe(200);
    const grace = members.body.items.find((m: { email: string }) => m.email === email);
    expect(grace).toMatchObject({ status: "active", role: "viewer" });
    expect(members.body.items.map((m: { email: string }) => m.email)).toContain(tenant.email);
  });

  it("refuses a used invitation with 410 invitation_expired, an old one too, and an unknown one with 404", async () => {
    const email = "reuse@example.com";
    await api.post(`${tenant.org}/memberships`, { email }, { token: tenant.token, idempotencyKey: ik() });
    const token = tokenIn(mailTo(email)[0]);
    expect(
      (
        await api.post(
          "/v1/invitations/accept",
          { token, password: "first password" },
          { idempotencyKey: ik() },
        )
      ).status,
    ).toBe(200);
    expectError(
      await api.post(
        "/v1/invitations/accept",
        { token, password: "second password" },
        { idempotencyKey: ik() },
      ),
      410,
      "invitation_expired",
    );
    // The second attempt changed nothing: the first password still works.
    expect((await api.post("/auth/login", { email, password: "first password" })).status).toBe(200);

    const late = "late@example.com";
    await api.post(
      `${tenant.org}/memberships`,
      { email: late },
      { token: tenant.token, idempotencyKey: ik() },
    );
    const lateToken = tokenIn(mailTo(late)[0]);
    await stack.db.query(
      "UPDATE invitations SET expires_at = now() - interval '1 second' WHERE used_at IS NULL",
    );
    expectError(
      await api.post(
        "/v1/invitations/accept",
        { token: lateToken, password: "a password" },
        { idempotencyKey: ik() },
      ),
      410,
      "invitation_expired",
    );
    expectError(
      await api.post("/auth/login", { email: late, password: "a password" }),
      401,
      "invalid_credentials",
    );

    const unknown = await api.post(
      "/v1/invitations/accept",
      { token: "nope", password: "a password" },
      { idempotencyKey: ik() },
    );
    expect(expectError(unknown, 404, "not_found").context).toEqual({ resource: "invitation" });
  });

  it("requires an Idempotency-Key on accept, validates the body, and takes no credentials", async () => {
    const missing = await api.post("/v1/invitations/accept", { token: "t", password: "short" });
    expect(missing.status).toBe(422);
    expect(missing.body.detail.map((item: { loc: string[] }) => item.loc.join("."))).toEqual([
      "header.Idempotency-Key",
      "body.password",
    ]);
  });

  it("invites a person who already has an account: not a member until they accept with their own password, which stays", async () => {
    const existing = await signUp(api);
    const invited = await api.post(
      `${tenant.org}/memberships`,
      { email: existing.email, role: "admin" },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(invited.status).toBe(201);
    expect(invited.body).toMatchObject({ status: "invited", role: "admin", email: existing.email });
    // Not a member yet: the organization is not theirs to see.
    expectError(await api.get(tenant.org, { token: existing.token }), 404, "not_found");
    const members = await api.get(`${tenant.org}/memberships`, { token: tenant.token });
    expect(members.body.items.find((m: { email: string }) => m.email === existing.email)).toMatchObject({
      status: "invited",
    });
    const token = tokenIn(mailTo(existing.email)[0]);

    // Another password than the account's is refused, and changes nothing: the invitation stays usable.
    const wrong = await api.post(
      "/v1/invitations/accept",
      { token, password: "somebody else's password" },
      { idempotencyKey: ik() },
    );
    expectError(wrong, 401, "invalid_credentials");
    expectError(await api.get(tenant.org, { token: existing.token }), 404, "not_found");

    const accepted = await api.post(
      "/v1/invitations/accept",
      { token, password: existing.password },
      { idempotencyKey: ik() },
    );
    expect(accepted.status).toBe(200);
    expect(accepted.body).toEqual({
      membership_id: invited.body.id,
      organization_id: tenant.organizationId,
      role: "admin",
      user_id: invited.body.user_id,
    });
    // A member now, with the same password as before.
    expect((await api.get(tenant.org, { token: existing.token })).status).toBe(200);
    expect(
      (await api.post("/auth/login", { email: existing.email, password: existing.password })).status,
    ).toBe(200);
    const again = await api.post(
      `${tenant.org}/memberships`,
      { email: existing.email },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expectError(again, 409, "already_exists");
  });

  it("answers the same for an email with an account and one without, and mails both alike", async () => {
    const existing = await signUp(api);
    const unknown = `nobody-${ik()}@example.com`;
    const answers = [];
    // The account's email in another case: the answer echoes it as asked.
    for (const email of [existing.email.toUpperCase(), unknown]) {
      const invited = await api.post(
        `${tenant.org}/memberships`,
        { email, role: "member" },
        { token: tenant.token, idempotencyKey: ik() },
      );
      expect(invited.status).toBe(201);
      const { id, user_id, email: echoed, created_at, updated_at, ...rest } = invited.body;
      expect(echoed).toBe(email);
      answers.push({
        keys: Object.keys(invited.body).sort(),
        rest,
        headers: [...invited.headers.keys()].sort(),
      });
    }
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0]?.rest).toEqual({
      organization_id: tenant.organizationId,
      role: "member",
      status: "invited",
    });
    const [known, fresh] = [mailTo(existing.email.toUpperCase()), mailTo(unknown)];
    expect(known).toHaveLength(1);
    expect(fresh).toHaveLength(1);
    const anonymized = (text: string | undefined) => text?.replace(/token=[0-9A-Za-z]+/, "token=…");
    expect(anonymized(known[0]?.text)).toBe(anonymized(fresh[0]?.text));
    expect(known[0]?.subject).toBe(fresh[0]?.subject);
    // The mail names who invited.
    expect(known[0]?.text).toContain(tenant.email);
  });

  it("takes signed-in people only, never an API key, and no role above the inviter's", async () => {
    const adminKey = await createKey(api, tenant, ["org:admin", "org:read"]);
    const byKey = await api.post(
      `${tenant.org}/memberships`,
      { email: `key-${ik()}@example.com`, role: "owner" },
      { token: adminKey.secret, idempotencyKey: ik() },
    );
    expect(expectError(byKey, 403, "forbidden").context).toEqual({ reason: "session_required" });

    // An admin of the organization may invite admins and below, never an owner.
    const admin = await signUp(api);
    await inviteColleague(api, {
      org: tenant.org,
      token: tenant.token,
      mailDir: stack.config.MAIL_DIR,
      email: admin.email,
      password: admin.password,
      role: "admin",
    });
    const adminToken = admin.token;
    const owner = await api.post(
      `${tenant.org}/memberships`,
      { email: `owner-${ik()}@example.com`, role: "owner" },
      { token: adminToken, idempotencyKey: ik() },
    );
    expect(expectError(owner, 403, "forbidden").context).toEqual({
      reason: "role_above_inviter",
      role: "owner",
      inviter_role: "admin",
    });
    const peer = await api.post(
      `${tenant.org}/memberships`,
      { email: `peer-${ik()}@example.com`, role: "admin" },
      { token: adminToken, idempotencyKey: ik() },
    );
    expect(peer.status).toBe(201);
    // The owner may invite an owner.
    const coOwner = await api.post(
      `${tenant.org}/memberships`,
      { email: `co-owner-${ik()}@example.com`, role: "owner" },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(coOwner.status).toBe(201);
  });

  it("lets an organization send INVITATIONS_PER_ORGANIZATION_PER_HOUR invitations an hour, across both gateways", async () => {
    const sender = await createTenant(api);
    for (let i = 0; i < INVITATIONS_PER_HOUR; i++) {
      const invited = await api.post(
        `${sender.org}/memberships`,
        { email: `bulk-${i}-${ik()}@example.com` },
        { token: sender.token, idempotencyKey: ik() },
      );
      expect(invited.status, invited.text).toBe(201);
    }
    const email = `one-too-many-${ik()}@example.com`;
    const refused = await api.post(
      `${sender.org}/memberships`,
      { email },
      { token: sender.token, idempotencyKey: ik() },
    );
    expect(expectError(refused, 429, "rate_limited").context).toMatchObject({ limit: INVITATIONS_PER_HOUR });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(mailTo(email)).toEqual([]);
    // Another organization is not held back by this one's.
    const other = await api.post(
      `${tenant.org}/memberships`,
      { email },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(other.status).toBe(201);
  });

  it("needs org:admin to invite and validates email and role", async () => {
    const member = await signUp(api);
    await inviteColleague(api, {
      org: tenant.org,
      token: tenant.token,
      mailDir: stack.config.MAIL_DIR,
      email: member.email,
      password: member.password,
    });
    const denied = await api.post(
      `${tenant.org}/memberships`,
      { email: "x@example.com" },
      { token: member.token, idempotencyKey: ik() },
    );
    expect(expectError(denied, 403, "forbidden").context).toEqual({ required_scope: "org:admin" });
    const bad = await api.post(
      `${tenant.org}/memberships`,
      { email: "ab", role: "king" },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toEqual([
      expect.objectContaining({ type: "string_too_short", loc: ["body", "email"], ctx: { min_length: 3 } }),
      expect.objectContaining({
        type: "enum",
        loc: ["body", "role"],
        msg: "Input should be 'owner', 'admin', 'member' or 'viewer'",
        ctx: { expected: "'owner', 'admin', 'member' or 'viewer'" },
      }),
    ]);
  });
});

describe("GET/PUT /v1/session/active-organization, GET /v1/session/organizations", () => {
  it("switches a session between the organizations its user belongs to, and 404s others", async () => {
    const user = await signUp(api);
    expect((await api.get("/v1/session/active-organization", { token: user.token })).body).toEqual({
      organization_id: user.organizationId,
    });
    await inviteColleague(api, {
      org: tenant.org,
      token: tenant.token,
      mailDir: stack.config.MAIL_DIR,
      email: user.email,
      password: user.password,
    });
    const switched = await api.call(
      "PUT",
      "/v1/session/active-organization",
      { organization_id: tenant.organizationId },
      { token: user.token },
    );
    expect(switched.status).toBe(200);
    expect(switched.body).toEqual({ organization_id: tenant.organizationId });
    expect(
      (await api.get("/v1/session/active-organization", { token: user.token })).body.organization_id,
    ).toBe(tenant.organizationId);
    // Those it may switch to: each organization its user belongs to, in the order they joined.
    const listed = await api.get("/v1/session/organizations", { token: user.token });
    expect(listed.status).toBe(200);
    expect(listed.body.items).toEqual([
      { organization_id: user.organizationId, name: expect.any(String), role: "owner" },
      { organization_id: tenant.organizationId, name: expect.any(String), role: "member" },
    ]);
    // The principal's scopes now are the member role's in that organization.
    const principal = await api.get("/v1/auth/principal", { token: user.token });
    expect(principal.body.scopes).not.toContain("keys:write");
    expect(principal.body.scopes).toContain("apps:write");

    const stranger = await signUp(api);
    const refused = await api.call(
      "PUT",
      "/v1/session/active-organization",
      { organization_id: stranger.organizationId },
      { token: user.token },
    );
    expectError(refused, 404, "not_found");
    const key = await createKey(api, tenant, ["org:read"]);
    expectError(await api.get("/v1/session/active-organization", { token: key.secret }), 403, "forbidden");
    expectError(await api.get("/v1/session/organizations", { token: key.secret }), 403, "forbidden");
  });
});

describe("GET ORG/audit-events", () => {
  it("records each control-plane mutation with actor, request id and no secret, filterable", async () => {
    const owner = await createTenant(api);
    const key = await createKey(api, owner, ["org:read"]);
    const requestId = "audit-revoke-1";
    await api.post(`${owner.env}/api-keys/${key.id}/revoke`, undefined, {
      token: owner.token,
      idempotencyKey: ik(),
      headers: { "x-request-id": requestId },
    });
    const events = await api.get(`${owner.org}/audit-events`, { token: owner.token });
    expect(events.status).toBe(200);
    const actions = events.body.items.map((event: { action: string }) => event.action);
    expect(actions).toEqual([
      "api_key.revoked",
      "api_key.created",
      "environment.created",
      "app.created",
      "organization.created",
    ]);
    const revoked = events.body.items[0];
    expect(revoked).toEqual({
      id: expect.any(String),
      organization_id: owner.organizationId,
      app_id: owner.appId,
      environment_id: owner.environmentId,
      actor_kind: "session",
      actor_id: expect.any(String),
      action: "api_key.revoked",
      resource_type: "api_key",
      resource_id: key.id,
      request_id: requestId,
      metadata: { name: "backend", key_prefix: key.body.key_prefix },
      created_at: expect.any(String),
    });
    expect(events.text).not.toContain(key.secret);

    const filtered = await api.get(`${owner.org}/audit-events?resource_type=api_key&action=api_key.created`, {
      token: owner.token,
    });
    expect(filtered.body.items.map((event: { action: string }) => event.action)).toEqual(["api_key.created"]);
    const paged = await api.get(`${owner.org}/audit-events?limit=2`, { token: owner.token });
    expect(paged.body.items).toHaveLength(2);
    const next = await api.get(`${owner.org}/audit-events?limit=2&cursor=${paged.body.next_cursor}`, {
      token: owner.token,
    });
    expect(next.body.items.map((event: { action: string }) => event.action)).toEqual([
      "environment.created",
      "app.created",
    ]);

    const viewerKey = await createKey(api, owner, ["org:read"]);
    expect(
      expectError(await api.get(`${owner.org}/audit-events`, { token: viewerKey.secret }), 403, "forbidden")
        .context,
    ).toEqual({
      required_scope: "audit:read",
    });
  });
});

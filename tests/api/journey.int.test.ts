import { describe, expect, it } from "vitest";
import { expectError, ik } from "./support/fixtures.js";
import { inviteColleague } from "./support/mail.js";
import { useStack } from "./support/stack.js";

// The client's journey (docs/journey.md) through the public API alone, as far as the
// planes built so far carry it: sign up, set up, invite, import, operate.
const context = useStack();

describe("the journey", () => {
  it("signs up, sets up, invites a colleague, imports subjects, raises a quota, audits and revokes a key", async () => {
    const { api, stack } = context;
    // 1. Sign up.
    const signup = await api.post("/auth/signup", {
      email: "founder@acme.example",
      password: "founder password",
      organization_name: "Acme",
    });
    expect(signup.status).toBe(201);
    const token = signup.body.access_token as string;
    const principal = await api.get("/v1/auth/principal", { token });
    expect(principal.body.kind).toBe("session");
    const org = `/v1/organizations/${signup.body.organization_id}`;

    // 2. Set up: app, environment, a backend key (shown once), and a colleague.
    const app = await api.post(
      `${org}/apps`,
      { slug: "hiring", name: "Hiring" },
      { token, idempotencyKey: ik() },
    );
    const appPath = `${org}/apps/${app.body.id}`;
    const env = await api.post(
      `${appPath}/environments`,
      { slug: "production", name: "Production" },
      { token, idempotencyKey: ik() },
    );
    const envPath = `${appPath}/environments/${env.body.id}`;
    const key = await api.post(
      `${envPath}/api-keys`,
      { name: "backend", scopes: ["subjects:write", "org:read", "evaluations:write"] },
      { token, idempotencyKey: ik() },
    );
    expect(key.status).toBe(201);
    const secret = key.body.secret as string;

    await inviteColleague(api, {
      org,
      token,
      mailDir: stack.config.MAIL_DIR,
      email: "colleague@acme.example",
      password: "colleague password",
    });
    const colleague = await api.post("/auth/login", {
      email: "colleague@acme.example",
      password: "colleague password",
    });
    expect((await api.get(appPath, { token: colleague.body.access_token })).status).toBe(200);

    // 5. Import subjects and a program with the backend key; a retried import changes nothing.
    const batch = {
      items: [1, 2, 3].map((n) => ({ external_id: `cand-${n}`, identity_mode: "anonymous", profile: { n } })),
    };
    const importKey = ik();
    const imported = await api.post(`${envPath}/subjects/batch`, batch, {
      apiKey: secret,
      idempotencyKey: importKey,
    });
    expect(imported.body.receipts.every((r: { error_code: string }) => r.error_code === "")).toBe(true);
    const retried = await api.post(`${envPath}/subjects/batch`, batch, {
      apiKey: secret,
      idempotencyKey: importKey,
    });
    expect(retried.body).toEqual({ ...imported.body, idempotent_replay: true });
    const program = await api.post(
      `${envPath}/programs`,
      { name: "Graduate intake" },
      { apiKey: secret, idempotencyKey: ik() },
    );
    expect(program.status).toBe(201);

    // 10. Operate: raise a quota, read the audit trail, revoke the key.
    const quotas = await api.get(`${envPath}/quotas`, { token });
    expect(quotas.body.usage).toMatchObject({ active_subjects: 3, programs: 1 });
    const raised = await api.patch(
      `${envPath}/quotas`,
      { expected_revision: quotas.body.revision, limits: { ...quotas.body.limits, programs: 500 } },
      { token, idempotencyKey: ik() },
    );
    expect(raised.body.revision).toBe(quotas.body.revision + 1);
    const audit = await api.get(`${org}/audit-events`, { token });
    expect(audit.body.items.map((e: { action: string }) => e.action)).toEqual(
      expect.arrayContaining([
        "organization.created",
        "app.created",
        "environment.created",
        "api_key.created",
        "membership.created",
        "invitation.accepted",
        "subjects.imported",
        "program.created",
        "quota.updated",
      ]),
    );
    const revoked = await api.post(`${envPath}/api-keys/${key.body.id}/revoke`, undefined, {
      token,
      idempotencyKey: ik(),
    });
    expect(revoked.body.revoked_at).not.toBeNull();
    expectError(await api.get(appPath, { apiKey: secret }), 401, "api_key_revoked");
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, apiClient } from "./support/client.js";
import { expectError, ik, signUp } from "./support/fixtures.js";
import { type Stack, startStack } from "./support/stack.js";

let stack: Stack;
let api: ApiClient;

beforeAll(async () => {
  stack = await startStack();
  api = apiClient(stack.urls);
});
afterAll(async () => {
  await stack?.close();
});

describe("POST /auth/signup", () => {
  it("creates a user and an organization, returns an access token and sets the session cookie", async () => {
    const response = await api.post("/auth/signup", {
      email: "ada@example.com",
      password: "correct horse battery staple",
      organization_name: "Analytical Engines",
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      user_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      organization_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      access_token: expect.stringMatching(/^evs_/),
      expires_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    // The 12 h lifetime of docs/authentication.md.
    const lifetime = new Date(response.body.expires_at).getTime() - Date.now();
    expect(lifetime).toBeGreaterThan(11.9 * 3600_000);
    expect(lifetime).toBeLessThanOrEqual(12 * 3600_000);
    const cookie = response.headers.get("set-cookie") ?? "";
    expect(cookie).toContain(`evp_session=${response.body.access_token}`);
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).toMatch(/Secure/i);

    const organization = await api.get(`/v1/organizations/${response.body.organization_id}`, {
      token: response.body.access_token,
    });
    expect(organization.status).toBe(200);
    expect(organization.body).toMatchObject({
      id: response.body.organization_id,
      name: "Analytical Engines",
    });
  });

  it("answers 409 already_exists for an email already signed up, whatever its case", async () => {
    const user = await signUp(api);
    const again = await api.post("/auth/signup", {
      email: user.email.toUpperCase(),
      password: "another password",
      organization_name: "Other",
    });
    expectError(again, 409, "already_exists");
  });

  it("reports every problem of the body at once, in the Pydantic shape", async () => {
    const response = await api.post("/auth/signup", { email: "not-an-email", password: "short", extra: 1 });
    expect(response.status).toBe(422);
    const items = response.body.detail as Array<Record<string, unknown>>;
    for (const item of items)
      expect(Object.keys(item).sort()).toEqual(["ctx", "input", "loc", "msg", "type"]);
    const byLoc = Object.fromEntries(items.map((item) => [(item.loc as string[]).join("."), item]));
    expect(byLoc["body.password"]).toEqual({
      type: "string_too_short",
      loc: ["body", "password"],
      msg: "String should have at least 8 characters",
      input: "short",
      ctx: { min_length: 8 },
    });
    expect(byLoc["body.organization_name"]).toEqual({
      type: "missing",
      loc: ["body", "organization_name"],
      msg: "Field required",
      input: { email: "not-an-email", password: "short", extra: 1 },
      ctx: {},
    });
    expect(byLoc["body.extra"]).toMatchObject({ type: "extra_forbidden", input: 1 });
    expect(byLoc["body.email"]).toMatchObject({ type: "value_error", input: "not-an-email" });
  });
});

describe("POST /auth/login and /auth/logout", () => {
  it("logs in, authenticates by bearer token and by cookie, and logs out for good", async () => {
    const user = await signUp(api);
    const login = await api.post("/auth/login", { email: user.email, password: user.password });
    expect(login.status).toBe(200);
    expect(login.body).toEqual({
      access_token: expect.stringMatching(/^evs_/),
      token_type: "bearer",
      expires_at: expect.any(String),
    });
    const token = login.body.access_token as string;

    const byBearer = await api.get("/v1/auth/principal", { token });
    expect(byBearer.status).toBe(200);
    expect(byBearer.body).toEqual({
      kind: "session",
      principal_id: expect.any(String),
      scopes: expect.arrayContaining(["org:admin", "keys:write", "interviews:agent"]),
      api_key_name: null,
      email: user.email,
    });
    const byCookie = await api.get("/v1/auth/principal", { cookie: `evp_session=${token}` });
    expect(byCookie.status).toBe(200);
    expect(byCookie.body.principal_id).toBe(byBearer.body.principal_id);

    const logout = await api.post("/auth/logout", undefined, { token });
    expect(logout.status).toBe(204);
    expect(logout.text).toBe("");
    expectError(await api.get("/v1/auth/principal", { token }), 401, "unauthenticated");
    expectError(
      await api.get("/v1/auth/principal", { cookie: `evp_session=${token}` }),
      401,
      "unauthenticated",
    );
    // The signup token is another session and stays valid.
    expect((await api.get("/v1/auth/principal", { token: user.token })).status).toBe(200);
  });

  it("answers 401 invalid_credentials alike for a wrong password and an unknown email", async () => {
    const user = await signUp(api);
    expectError(
      await api.post("/auth/login", { email: user.email, password: "wrong password" }),
      401,
      "invalid_credentials",
    );
    expectError(
      await api.post("/auth/login", { email: "nobody@example.com", password: "wrong password" }),
      401,
      "invalid_credentials",
    );
  });

  it("answers 401 token_expired for an access token past its expiry", async () => {
    const user = await signUp(api);
    await stack.db.query("UPDATE sessions SET expires_at = now() - interval '1 second'");
    expectError(await api.get("/v1/auth/principal", { token: user.token }), 401, "token_expired");
  });
});

describe("authentication", () => {
  it("answers 401 unauthenticated without credentials, with unknown ones, and with a malformed header", async () => {
    expectError(await api.get("/v1/auth/principal"), 401, "unauthenticated");
    expectError(await api.get("/v1/auth/principal", { token: "evs_nope" }), 401, "unauthenticated");
    expectError(
      await api.get("/v1/auth/principal", { apiKey: "evk_AAAAAAAA_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB" }),
      401,
      "unauthenticated",
    );
    expectError(
      await api.get("/v1/auth/principal", { headers: { authorization: "Basic dXNlcjpwYXNz" } }),
      401,
      "unauthenticated",
    );
  });

  it("creates organizations for sessions only, the caller becoming owner", async () => {
    const user = await signUp(api);
    const created = await api.post(
      "/v1/organizations",
      { name: "Second" },
      { token: user.token, idempotencyKey: ik() },
    );
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.any(String), name: "Second", created_at: expect.any(String) });
    const read = await api.get(`/v1/organizations/${created.body.id}`, { token: user.token });
    expect(read.status).toBe(200);
    // Another user cannot see it at all.
    const other = await signUp(api);
    const hidden = await api.get(`/v1/organizations/${created.body.id}`, { token: other.token });
    expect(expectError(hidden, 404, "not_found").context).toEqual({ resource: "organization" });
  });
});

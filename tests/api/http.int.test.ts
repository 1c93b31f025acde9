import { beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, apiClient } from "./support/client.js";
import { createTenant, expectError, ik, type Tenant } from "./support/fixtures.js";
import { type Stack, useStack } from "./support/stack.js";

const context = useStack();
let stack: Stack;
let api: ApiClient;
let tenant: Tenant;

beforeAll(async () => {
  ({ stack, api } = context);
  tenant = await createTenant(api);
});

describe("general HTTP rules (docs/http.md, docs/errors.md)", () => {
  it("keeps a well-formed X-Request-Id and replaces a malformed one", async () => {
    const kept = await api.get("/v1/auth/principal", { headers: { "x-request-id": "client.req-42_A" } });
    expect(kept.headers.get("x-request-id")).toBe("client.req-42_A");
    expect(kept.body.detail.request_id).toBe("client.req-42_A");
    const replaced = await api.get("/v1/auth/principal", {
      headers: { "x-request-id": "bad id with spaces" },
    });
    expect(replaced.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const generated = await api.get("/healthz");
    expect(generated.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("answers 404 not_found in the envelope for an unknown route", async () => {
    const response = await api.get("/v1/nothing-here", { token: tenant.token });
    expect(expectError(response, 404, "not_found").context).toEqual({ resource: "route" });
  });

  it("answers 415 unsupported_media_type for a body that is not JSON, changing nothing", async () => {
    const response = await api.post(`${tenant.org}/apps`, undefined, {
      token: tenant.token,
      idempotencyKey: ik(),
      raw: "slug=x&name=y",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expectError(response, 415, "unsupported_media_type");
    const count = await stack.db.query("SELECT count(*)::int AS n FROM apps WHERE slug = 'x'");
    expect(count.rows[0].n).toBe(0);
  });

  it("answers 413 payload_too_large for a body over 1 MiB", async () => {
    const response = await api.post(
      `${tenant.org}/apps`,
      { slug: "big", name: "x".repeat(1024 * 1024) },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expectError(response, 413, "payload_too_large");
  });

  it("answers 422 json_invalid with the offset of the syntax error", async () => {
    const response = await api.post(`${tenant.org}/apps`, undefined, {
      token: tenant.token,
      idempotencyKey: ik(),
      raw: '{"slug": "x",}',
      headers: { "content-type": "application/json" },
    });
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([
      {
        type: "json_invalid",
        loc: ["body", "13"],
        msg: "JSON decode error",
        input: {},
        ctx: expect.any(Object),
      },
    ]);
  });

  it("answers 422 missing at body when a required body is absent", async () => {
    const response = await api.post(`${tenant.org}/apps`, undefined, {
      token: tenant.token,
      idempotencyKey: ik(),
    });
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([
      { type: "missing", loc: ["body"], msg: "Field required", input: null, ctx: {} },
    ]);
  });

  it("sends RateLimit headers on every response", async () => {
    const response = await api.get("/v1/auth/principal", { token: tenant.token });
    expect(response.headers.get("ratelimit-limit")).toBe("600");
    expect(Number(response.headers.get("ratelimit-remaining"))).toBeLessThan(600);
    expect(Number(response.headers.get("ratelimit-reset"))).toBeGreaterThan(0);
  });
});

describe("operations", () => {
  it("serves /healthz on the public port, and /readyz and /metrics only on the ops port", async () => {
    expect((await api.get("/healthz")).body).toEqual({ status: "ok" });
    const ops = apiClient(stack.opsUrl);
    expect((await ops.get("/healthz")).body).toEqual({ status: "ok" });
    const ready = await ops.get("/readyz");
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: "ready" });
    const metrics = await ops.get("/metrics");
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain("http_request_duration_seconds_bucket");
    // Neither readiness (it asks every plane) nor metrics are for the internet.
    expectError(await api.get("/readyz"), 404, "not_found");
    expectError(await api.get("/metrics"), 404, "not_found");
  });

  it("serves an OpenAPI 3.1 document of every public endpoint, and /docs", async () => {
    const document = await api.get("/openapi.json");
    expect(document.status).toBe(200);
    expect(document.body.openapi).toBe("3.1.0");
    const paths = Object.keys(document.body.paths);
    for (const path of [
      "/auth/signup",
      "/auth/login",
      "/auth/logout",
      "/v1/auth/principal",
      "/v1/organizations",
      "/v1/organizations/{organization_id}",
      "/v1/organizations/{organization_id}/apps",
      "/v1/organizations/{organization_id}/apps/{app_id}",
      "/v1/organizations/{organization_id}/apps/{app_id}/environments",
      "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/api-keys",
      "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/api-keys/{key_id}/revoke",
      "/auth/password-reset/request",
      "/auth/password-reset/confirm",
      "/v1/session/active-organization",
      "/v1/organizations/{organization_id}/memberships",
      "/v1/invitations/accept",
      "/v1/organizations/{organization_id}/audit-events",
      "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/quotas",
      "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/subjects/batch",
      "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/subjects/{subject_id}",
      "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/programs",
      "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/webhooks",
      "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/webhooks/{id}",
      "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/webhooks/{id}/rotate-secret",
      "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/webhooks/{id}/test",
      "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/webhooks/{id}/recover",
      "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/webhook-deliveries",
      "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/webhook-deliveries/{delivery_id}",
      "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/webhook-deliveries/{delivery_id}/replay",
      "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/evaluations/{evaluation_id}/agent-sessions",
      "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/agent-prices",
      "/v1/agent/interview",
      "/v1/agent/interview/commands",
      "/v1/participant/interview/proposals/{proposal_id}/confirm",
      "/v1/participant/interview/proposals/{proposal_id}/reject",
    ]) {
      expect(paths).toContain(path);
    }
    expect(paths).not.toContain("/healthz");
    const docs = await api.get("/docs/");
    expect(docs.status).toBe(200);
    expect(docs.text).toContain("swagger");
  });
});

describe("a backend that is down", () => {
  // A stack of its own, whose control the test stops; started before the test (under the hook's
  // timeout, as every stack is).
  const separate = useStack();

  it("answers 503 unavailable with Retry-After, and /readyz says degraded", async () => {
    const client = apiClient(separate.stack.url);
    const user = await client.post("/auth/signup", {
      email: "down@example.com",
      password: "password123",
      organization_name: "Down",
    });
    await separate.stack.stop("control");
    const response = await client.get("/v1/auth/principal", { token: user.body.access_token });
    const detail = expectError(response, 503, "unavailable");
    expect(detail.message).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|stack/i);
    expect(response.headers.get("retry-after")).toBe("1");
    // The gateway still serves what needs no control: it stays ready, and says what it misses.
    const ready = await apiClient(separate.stack.opsUrl).get("/readyz");
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: "degraded", failing: ["control"] });
  });
});

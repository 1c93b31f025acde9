import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, apiClient } from "./support/client.js";
import { ik } from "./support/fixtures.js";
import { type Stack, startStack } from "./support/stack.js";

const lines: string[] = [];
let stack: Stack;
let api: ApiClient;

beforeAll(async () => {
  stack = await startStack({}, { logLines: lines });
  api = apiClient(stack.urls);
});
afterAll(async () => {
  await stack?.close();
});

const parsed = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);

describe("logs (docs/http.md, docs/configuration.md)", () => {
  it("follow a request id from the gateway into every service it touched, one line per request", async () => {
    const requestId = "trace-me-123";
    const signup = await api.post(
      "/auth/signup",
      { email: "logs@example.com", password: "a secret password", organization_name: "Logs" },
      { headers: { "x-request-id": requestId } },
    );
    expect(signup.status).toBe(201);
    const mine = parsed().filter((line) => line.request_id === requestId);
    const gateway = mine.filter((line) => line.service === "gateway" && line.msg === "request");
    expect(gateway).toHaveLength(1);
    expect(gateway[0]).toMatchObject({ method: "POST", route: "/auth/signup", status: 201 });
    expect(typeof gateway[0]?.duration_ms).toBe("number");
    expect(
      mine.some((line) => line.service === "control" && line.rpc === "Signup" && line.code === "ok"),
    ).toBe(true);

    const token = signup.body.access_token as string;
    const principalId = "principal";
    await api.get("/v1/auth/principal", { token, headers: { "x-request-id": principalId } });
    const authenticated = parsed().find((line) => line.request_id === principalId && line.msg === "request");
    expect(authenticated).toMatchObject({ principal_kind: "session", principal_id: signup.body.user_id });
  });

  it("never contain a password, token or key the run used", async () => {
    const password = "another secret password";
    const signup = await api.post("/auth/signup", {
      email: "quiet@example.com",
      password,
      organization_name: "Quiet",
    });
    const token = signup.body.access_token as string;
    const org = `/v1/organizations/${signup.body.organization_id}`;
    const app = await api.post(`${org}/apps`, { slug: "a", name: "A" }, { token, idempotencyKey: ik() });
    const env = await api.post(
      `${org}/apps/${app.body.id}/environments`,
      { slug: "e", name: "E" },
      { token, idempotencyKey: ik() },
    );
    const key = await api.post(
      `${org}/apps/${app.body.id}/environments/${env.body.id}/api-keys`,
      { name: "k", scopes: ["org:read"] },
      { token, idempotencyKey: ik() },
    );
    await api.get(org, { apiKey: key.body.secret });
    await api.post("/auth/login", { email: "quiet@example.com", password: "wrong password" });
    const all = lines.join("\n");
    expect(lines.length).toBeGreaterThan(10);
    for (const secret of [password, "wrong password", token, key.body.secret as string]) {
      expect(all).not.toContain(secret);
    }
  });
});

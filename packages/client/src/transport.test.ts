import { type Receiver, startReceiver } from "@evalp/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createClient, unwrap } from "./index.js";

const ORG = "0190c0de-0000-7000-8000-000000000001";
const APPS = `/v1/organizations/${ORG}/apps`;
const APP = { id: "a", organization_id: ORG, slug: "s", name: "n", description: null, created_at: "t" };

let server: Receiver;
beforeAll(async () => {
  server = await startReceiver();
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
});

const json = (status: number, body: unknown, headers: Record<string, string> = {}) => ({
  status,
  body: JSON.stringify(body),
  headers: { "content-type": "application/json", ...headers },
});
const unavailable = (retryAfter?: string) => ({
  ...json(503, { detail: { code: "unavailable", message: "down", context: {}, request_id: "r" } }),
  ...(retryAfter === undefined ? {} : { retryAfter }),
});
const createApp = (client: ReturnType<typeof createClient>, key?: string) =>
  client.POST("/v1/organizations/{organization_id}/apps", {
    params: { path: { organization_id: ORG }, ...(key ? { header: { "idempotency-key": key } } : {}) },
    body: { slug: "s", name: "n" },
  });

describe("credentials", () => {
  it("sends an API key as X-API-Key and an access token as a bearer", async () => {
    server.respond(json(200, { items: [], next_cursor: null }));
    const params = { path: { organization_id: ORG } };
    await createClient({ baseUrl: server.url, apiKey: "evk_k" }).GET(
      "/v1/organizations/{organization_id}/apps",
      {
        params,
      },
    );
    await createClient({ baseUrl: server.url, accessToken: "tok" }).GET(
      "/v1/organizations/{organization_id}/apps",
      { params },
    );
    expect(
      server.requests.map((request) => [request.headers["x-api-key"], request.headers.authorization]),
    ).toEqual([
      ["evk_k", undefined],
      [undefined, "Bearer tok"],
    ]);
  });
});

describe("idempotency keys", () => {
  it("gives every write a new key and reads none", async () => {
    server.respond((request) => (request.method === "GET" ? json(200, APP) : json(201, APP)));
    const client = createClient({ baseUrl: server.url });
    await unwrap(createApp(client));
    await unwrap(createApp(client));
    await unwrap(
      client.GET("/v1/organizations/{organization_id}/apps/{app_id}", {
        params: { path: { organization_id: ORG, app_id: "a" } },
      }),
    );
    const [first, second, read] = server.requests.map((request) => request.headers["idempotency-key"]);
    expect(first).toMatch(/^[0-9a-f-]{36}$/);
    expect(second).toMatch(/^[0-9a-f-]{36}$/);
    expect(second).not.toBe(first);
    expect(read).toBeUndefined();
  });

  it("keeps the caller's key", async () => {
    server.respond(json(201, APP));
    await unwrap(createApp(createClient({ baseUrl: server.url }), "my-key-1"));
    expect(server.requests[0]?.headers["idempotency-key"]).toBe("my-key-1");
  });
});

describe("retries", () => {
  it("retries a 503 after Retry-After with the same key and body, and returns the success", async () => {
    server.respond((_request, index) => (index === 0 ? unavailable("1") : json(201, APP)));
    const started = performance.now();
    const app = await unwrap(createApp(createClient({ baseUrl: server.url })));
    const waited = performance.now() - started;
    expect(app.id).toBe("a");
    expect(server.requests).toHaveLength(2);
    const [first, retry] = server.requests;
    expect(retry?.headers["idempotency-key"]).toBe(first?.headers["idempotency-key"]);
    expect(retry?.body).toBe(first?.body);
    expect(JSON.parse(retry?.body ?? "")).toEqual({ slug: "s", name: "n" });
    expect(waited).toBeGreaterThanOrEqual(950);
  });

  it("retries a 504, then a 409 idempotency_key_in_use, with the same key, and returns the result", async () => {
    const timedOut = json(504, {
      detail: { code: "upstream_timeout", message: "slow", context: {}, request_id: "r" },
    });
    const inUse = {
      ...json(409, {
        detail: { code: "idempotency_key_in_use", message: "running", context: {}, request_id: "r" },
      }),
      retryAfter: "0",
    };
    server.respond((_request, index) => [timedOut, inUse][index] ?? json(201, APP));
    const client = createClient({ baseUrl: server.url, retry: { baseDelayMs: 1 } });
    expect((await unwrap(createApp(client))).id).toBe("a");
    const keys = server.requests.map((request) => request.headers["idempotency-key"]);
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
  });

  it("returns another 409 at once: only one that says when to come back is retried", async () => {
    server.respond(
      json(409, { detail: { code: "already_exists", message: "taken", context: {}, request_id: "r" } }),
    );
    const answer = await createApp(createClient({ baseUrl: server.url }));
    expect(answer.response.status).toBe(409);
    expect(server.requests).toHaveLength(1);
  });

  it("retries a 429 and keeps a caller's key on every try", async () => {
    server.respond((_request, index) =>
      index < 2
        ? {
            ...json(429, { detail: { code: "rate_limited", message: "slow", context: {}, request_id: "r" } }),
            retryAfter: "0",
          }
        : json(201, APP),
    );
    await unwrap(createApp(createClient({ baseUrl: server.url }), "kept"));
    expect(server.requests.map((request) => request.headers["idempotency-key"])).toEqual([
      "kept",
      "kept",
      "kept",
    ]);
  });

  it("stops after the configured tries and throws the last refusal", async () => {
    server.respond(unavailable("0"));
    const client = createClient({ baseUrl: server.url, retry: { attempts: 2 } });
    await expect(unwrap(createApp(client))).rejects.toMatchObject({ status: 503, code: "unavailable" });
    expect(server.requests).toHaveLength(2);
  });

  it("does not wait longer than allowed: a long Retry-After comes back at once", async () => {
    server.respond(unavailable("120"));
    const client = createClient({ baseUrl: server.url, retry: { maxDelayMs: 5_000 } });
    const error = await unwrap(createApp(client)).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 503, retryAfter: "120" });
    expect(server.requests).toHaveLength(1);
  });

  it("backs off when no Retry-After is given, and never retries other failures", async () => {
    server.respond((_request, index) => (index === 0 ? unavailable() : json(201, APP)));
    await unwrap(createApp(createClient({ baseUrl: server.url, retry: { baseDelayMs: 10 } })));
    expect(server.requests).toHaveLength(2);

    server.requests.length = 0;
    server.respond(json(500, { detail: { code: "internal", message: "bug", context: {}, request_id: "r" } }));
    await expect(unwrap(createApp(createClient({ baseUrl: server.url })))).rejects.toMatchObject({
      status: 500,
    });
    expect(server.requests).toHaveLength(1);
  });

  it("can be turned off", async () => {
    server.respond(unavailable("0"));
    await expect(
      unwrap(createApp(createClient({ baseUrl: server.url, retry: false }))),
    ).rejects.toMatchObject({
      code: "unavailable",
    });
    expect(server.requests).toHaveLength(1);
  });
});

describe("requests", () => {
  it("go to the typed path with query parameters", async () => {
    server.respond(json(200, { items: [APP], next_cursor: null }));
    const page = await unwrap(
      createClient({ baseUrl: `${server.url}/` }).GET("/v1/organizations/{organization_id}/apps", {
        params: { path: { organization_id: ORG }, query: { limit: 5 } },
      }),
    );
    expect(page.items[0]?.slug).toBe("s");
    expect(server.requests[0]?.path).toBe(`${APPS}?limit=5`);
  });
});

// What a hostile client can make the platform do, held to a bound: a flood of made-up credentials
// is refused at the edge once its address used up its refusals, and costs control at most that
// many lookups; clients behind the trusted proxy have limits of their own. And what a foothold
// inside the cluster cannot do: call a service without a service token, or publish an event.
import { randomBytes, randomUUID } from "node:crypto";
import { Code, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { connectNats, createLogger } from "@evalp/kit";
import { QuotaService } from "@evalp/proto/control/v1/quota";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, errors } from "@nats-io/transport-node";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentInterview } from "../api/support/agent.js";
import { type ApiResponse, apiClient } from "../api/support/client.js";
import { createKey, createTenant, expectError, ik } from "../api/support/fixtures.js";
import { consentedInterview, interviewSetup, openSocket } from "../api/support/interview.js";
import { type PlatformProcesses, startProcesses } from "../api/support/processes.js";

/** Refusals an address may earn a minute (RATE_LIMIT_PER_MINUTE) in this file. */
const LIMIT = 100;
/** Requests in flight at once: each can have passed the check before the last refusals were counted. */
const CONCURRENCY = 16;

let platform: PlatformProcesses;

beforeAll(async () => {
  platform = await startProcesses({
    // The test client is the proxy: X-Forwarded-For names the client behind it.
    env: { RATE_LIMIT_PER_MINUTE: String(LIMIT), TRUSTED_PROXIES: "127.0.0.1" },
  });
}, 60_000);

afterAll(async () => {
  await platform?.close();
});

/** `AuthService/Authenticate` calls control has served (its `/metrics`). */
async function authentications(): Promise<number> {
  const text = await (await fetch(`${platform.opsUrl("control")}/metrics`)).text();
  const line = text
    .split("\n")
    .find((entry) =>
      entry.startsWith('rpc_server_calls_total{method="evalp.control.v1.AuthService/Authenticate"'),
    );
  return line ? Number(line.slice(line.lastIndexOf(" ") + 1)) : 0;
}

const randomKey = () => `evk_${randomBytes(24).toString("base64url")}`;

/** `count` requests with made-up API keys from `client` (its X-Forwarded-For), CONCURRENCY at once. */
async function flood(client: string, count: number): Promise<ApiResponse[]> {
  const api = apiClient(platform.url);
  const answers: ApiResponse[] = [];
  let sent = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (sent < count) {
        sent += 1;
        answers.push(
          await api.get("/v1/auth/principal", {
            apiKey: randomKey(),
            headers: { "x-forwarded-for": client },
          }),
        );
      }
    }),
  );
  return answers;
}

describe("the edge limiter", () => {
  it("answers a flood of made-up credentials 429 once the address's refusals are used up, and control is asked at most that often", async () => {
    const before = await authentications();
    const answers = await flood("198.51.100.7", 2_000);
    const looked = (await authentications()) - before;
    const statuses = answers.map((answer) => answer.status);
    const refused = statuses.filter((status) => status === 401).length;
    const limited = statuses.filter((status) => status === 429).length;
    console.info(`2000 made-up keys: ${refused} × 401, ${limited} × 429; control authenticated ${looked}`);
    expect(refused + limited).toBe(2_000);
    expect(refused).toBeGreaterThanOrEqual(LIMIT);
    expect(refused).toBeLessThanOrEqual(LIMIT + CONCURRENCY);
    expect(looked).toBeLessThanOrEqual(LIMIT + CONCURRENCY);
    // Every answer, refused or limited, says where the client stands.
    for (const answer of answers) {
      expect(Number(answer.headers.get("ratelimit-limit")), answer.text).toBeGreaterThan(0);
      expect(answer.headers.get("ratelimit-remaining")).toMatch(/^\d+$/);
      expect(Number(answer.headers.get("ratelimit-reset"))).toBeGreaterThan(0);
    }
    const last = answers.find((answer) => answer.status === 429);
    expectError(last!, 429, "rate_limited");
    expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(last!.headers.get("ratelimit-remaining")).toBe("0");
  }, 60_000);

  it("keeps the limits of two clients behind the trusted proxy apart", async () => {
    const first = await flood("198.51.100.20", LIMIT + CONCURRENCY + 10);
    expect(first.at(-1)?.status).toBe(429);
    // The other client, through the same proxy, is refused for its key, not limited.
    const second = await flood("198.51.100.21", 5);
    expect(second.map((answer) => answer.status)).toEqual([401, 401, 401, 401, 401]);
  }, 60_000);
});

/** Every string value Redis holds under the platform's key prefix, as a dump would show them. */
async function redisValues(): Promise<Buffer[]> {
  const redis = new Redis(platform.env.REDIS_URL ?? "redis://127.0.0.1:6379");
  try {
    const values: Buffer[] = [];
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(
        cursor,
        "MATCH",
        `${platform.env.REDIS_KEY_PREFIX}*`,
        "COUNT",
        1000,
      );
      cursor = next;
      for (const key of keys) {
        if ((await redis.type(key)) === "string")
          values.push((await redis.getBuffer(key)) ?? Buffer.alloc(0));
      }
    } while (cursor !== "0");
    return values;
  } finally {
    redis.disconnect();
  }
}

/** Bytes Redis holds under the platform's key prefix (every string value's length). */
async function redisBytes(): Promise<number> {
  return (await redisValues()).reduce((total, value) => total + value.length, 0);
}

describe("a dump of Redis", () => {
  it("shows no secret of a journey: keys, webhook secrets, access, participant and agent tokens", async () => {
    const api = apiClient(platform.url);
    const tenant = await createTenant(api);
    const secrets: string[] = [];
    const login = await api.post(
      "/auth/login",
      { email: tenant.email, password: tenant.password },
      { idempotencyKey: ik() },
    );
    expect(login.status).toBe(200);
    secrets.push(login.body.access_token, tenant.password);
    secrets.push((await createKey(api, tenant, ["org:read"])).secret);
    const endpoint = await api.post(
      `${tenant.env}/webhooks`,
      { url: "http://127.0.0.1:9/hook", event_types: ["webhook.test"] },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(endpoint.status).toBe(201);
    secrets.push(endpoint.body.secret);
    const run = await agentInterview(api, await interviewSetup(api, tenant));
    secrets.push(
      run.session.participant_token,
      run.agentSession.agent_token,
      run.started.connection.participant_token,
    );

    const values = (await redisValues()).map((value) => value.toString("latin1"));
    // The journey's answers were kept (sealed): the dump is not empty.
    expect(values.length).toBeGreaterThan(5);
    for (const secret of secrets) {
      expect(secret.length).toBeGreaterThan(10);
      expect(values.filter((value) => value.includes(secret))).toEqual([]);
    }
  }, 60_000);
});

describe("a realtime socket", () => {
  const utterance = (text: string) =>
    JSON.stringify({ type: "utterance", modality: "text", text, started_at: new Date().toISOString() });

  it("that floods frames is closed with 1008, while another socket of the interview goes on", async () => {
    const api = apiClient(platform.url);
    const setup = await interviewSetup(api, await createTenant(api));
    const { started } = await consentedInterview(api, setup);
    const { server_url, participant_token } = started.connection;
    const flooding = await openSocket(server_url, participant_token);
    const steady = await openSocket(server_url, participant_token);
    const ended = new Promise<{ code: number; reason: string }>((resolve) =>
      flooding.ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    for (let i = 0; i < 200; i++) flooding.ws.send(utterance(`flood ${i}`));
    const { code, reason } = await ended;
    expect(code).toBe(1008);
    expect(reason).toMatch(/^more than \d+ frames (a second|waiting)$/);
    steady.ws.send(utterance("still here"));
    let frame = await steady.next();
    while (frame.type !== "entry" || frame.entry.text !== "still here") frame = await steady.next();
    expect(frame).toMatchObject({ type: "entry", entry: { speaker: "participant", text: "still here" } });
    await steady.close();
  }, 60_000);
});

describe("anonymous Idempotency-Key records", () => {
  /** What 500 stored answers may take in all: a few KiB each, not the megabyte each request sent. */
  const BOUND_BYTES = 2 * 1024 * 1024;

  it(`keep 500 anonymous 1 MiB requests with fresh keys under ${BOUND_BYTES / 1024 / 1024} MiB of Redis`, async () => {
    const api = apiClient(platform.url);
    const before = await redisBytes();
    const body = { nickname: "x".repeat(1024 * 1024 - 100) };
    let sent = 0;
    const statuses: number[] = [];
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (sent < 500) {
          sent += 1;
          statuses.push((await api.post("/auth/signup", body, { idempotencyKey: randomUUID() })).status);
        }
      }),
    );
    const grown = (await redisBytes()) - before;
    console.info(
      `500 anonymous 1 MiB requests: ${statuses.filter((s) => s === 422).length} × 422; Redis grew ${grown} bytes`,
    );
    expect(statuses.every((status) => status === 422)).toBe(true);
    expect(grown).toBeLessThan(BOUND_BYTES);
  }, 120_000);
});

describe("inside the cluster", () => {
  it("refuses a call to a service that carries no service token, from any address", async () => {
    const quotas = createClient(
      QuotaService,
      createConnectTransport({ baseUrl: `http://127.0.0.1:${platform.ports.control.rpc}`, httpVersion: "2" }),
    );
    await expect(quotas.getLimits({ environmentId: randomUUID() })).rejects.toMatchObject({
      code: Code.Unauthenticated,
    });
  });

  it("refuses an event published on NATS by a process that may not, and stores none", async () => {
    const { authorization, url } = platform.nats;
    if (!authorization) throw new Error("the processes' NATS server runs without users");
    const gateway = await connectNats(
      { NATS_URL: url, ...authorization.credentials("gateway") },
      "abuse",
      createLogger("abuse", "silent"),
    );
    const harness = await connect({ servers: url, ...authorization.harness });
    try {
      const refused: string[] = [];
      void (async () => {
        for await (const status of gateway.status()) {
          if (status.type === "error" && status.error instanceof errors.PermissionViolationError) {
            refused.push(status.error.subject);
          }
        }
      })();
      const subject = `${platform.env.EVENTS_SUBJECT_PREFIX}.${randomUUID()}.subject.imported`;
      gateway.publish(subject, JSON.stringify({ type: "subject.imported", data: {} }));
      await gateway.flush();
      await new Promise((resolve) => setImmediate(resolve));
      expect(refused).toEqual([subject]);
      const jsm = await jetstreamManager(harness);
      const info = await jsm.streams.info(platform.env.EVENTS_STREAM as string, { subjects_filter: subject });
      expect(info.state.subjects?.[subject] ?? 0).toBe(0);
    } finally {
      await gateway.close();
      await harness.close();
    }
  });
});

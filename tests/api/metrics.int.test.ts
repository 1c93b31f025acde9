import { AUDIT_CONSUMER, EVENTS_CONSUMER, METRICS, type MetricProcess } from "@evalp/kit";
import type { Receiver } from "@evalp/testing";
import { afterAll, describe, expect, it, vi } from "vitest";
import { apiClient } from "./support/client.js";
import { startCheckedReceiver } from "./support/event-catalog.js";
import { createKey, createTenant, expectError, ik } from "./support/fixtures.js";
import { consentedInterview, interviewSetup, openSocket } from "./support/interview.js";
import { inviteColleague } from "./support/mail.js";
import { metricValue, type Scrape, samplesOf, scrape } from "./support/metrics.js";
import { useStack } from "./support/stack.js";
import { createEndpoint, deliveriesOf } from "./support/webhooks.js";

// Two attempts (one retry 50 ms later) before a failing delivery turns dead_letter.
const context = useStack({ WEBHOOK_RETRY_SCHEDULE_MS: "50", WEBHOOK_ALLOW_PRIVATE: "true" });
let receiver: Receiver | undefined;

afterAll(async () => {
  await receiver?.close();
});

const PROCESSES: MetricProcess[] = ["gateway", "control", "platform", "interview", "webhooks"];
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

async function scrapeAll(): Promise<Record<MetricProcess, Scrape>> {
  const { opsUrls } = context.stack;
  const entries = await Promise.all(
    PROCESSES.map(async (name) => [name, await scrape(opsUrls[name])] as const),
  );
  return Object.fromEntries(entries) as Record<MetricProcess, Scrape>;
}

describe("metrics on every process's ops port (#19)", () => {
  it("after the API journey, every metric is exposed where it belongs, non-zero where the journey exercised it", async () => {
    const { stack } = context;
    // Through the first gateway alone (the one whose ops port is scraped, and the realtime door).
    const api = apiClient(stack.url);
    receiver = await startCheckedReceiver(api);
    receiver.respond((request) => ({ status: request.path === "/failing" ? 500 : 204 }));

    // The journey (docs/journey.md), as tests/api/journey.int.test.ts walks it.
    const tenant = await createTenant(api);
    const { token, org, env: envPath } = tenant;
    // Webhook endpoints before anything is emitted: one that takes every event, one that fails.
    const good = await createEndpoint(api, tenant, { url: `${receiver.url}/hooks`, event_types: ["*"] });
    const failing = await createEndpoint(api, tenant, {
      url: `${receiver.url}/failing`,
      event_types: ["subject.imported"],
    });
    const { secret } = await createKey(api, tenant, ["subjects:write", "org:read", "evaluations:write"]);
    await inviteColleague(api, {
      org,
      token,
      mailDir: stack.config.MAIL_DIR,
      email: "colleague@metrics.example",
      password: "colleague password",
    });

    // An import retried with its key is replayed; the key reused for another batch is refused.
    const batch = {
      items: [1, 2].map((n) => ({ external_id: `cand-${n}`, identity_mode: "anonymous", profile: {} })),
    };
    const importKey = ik();
    const imported = await api.post(`${envPath}/subjects/batch`, batch, {
      apiKey: secret,
      idempotencyKey: importKey,
    });
    expect(imported.status).toBe(200);
    const replayed = await api.post(`${envPath}/subjects/batch`, batch, {
      apiKey: secret,
      idempotencyKey: importKey,
    });
    expect(replayed.body.idempotent_replay).toBe(true);
    expectError(
      await api.post(
        `${envPath}/subjects/batch`,
        { items: [] },
        { apiKey: secret, idempotencyKey: importKey },
      ),
      422,
      "idempotency_key_reused",
    );
    const program = await api.post(
      `${envPath}/programs`,
      { name: "Graduate intake" },
      { apiKey: secret, idempotencyKey: ik() },
    );
    expect(program.status).toBe(201);
    const quotas = await api.get(`${envPath}/quotas`, { token });
    const raised = await api.patch(
      `${envPath}/quotas`,
      { expected_revision: quotas.body.revision, limits: { ...quotas.body.limits, programs: 500 } },
      { token, idempotencyKey: ik() },
    );
    expect(raised.status).toBe(200);
    expect((await api.get(`${org}/audit-events`, { token })).status).toBe(200);

    // An interview, its participant on the realtime door.
    const { started } = await consentedInterview(api, await interviewSetup(api, tenant));
    const socket = await openSocket(started.connection.server_url, started.connection.participant_token);

    // Brute force: the sixth login a minute for one email is refused.
    for (let attempt = 0; attempt < 5; attempt++) {
      const refused = await api.post("/auth/login", { email: tenant.email, password: "wrong password" });
      expect(refused.status).toBe(401);
    }
    expectError(
      await api.post("/auth/login", { email: tenant.email, password: "wrong" }),
      429,
      "rate_limited",
    );

    // Deliveries: the good endpoint's succeed, the failing one's turn dead_letter after two attempts.
    await vi.waitFor(
      async () => {
        expect((await deliveriesOf(api, tenant, failing.id, "dead_letter")).length).toBeGreaterThan(0);
        expect((await deliveriesOf(api, tenant, good.id, "succeeded")).length).toBeGreaterThan(0);
      },
      { timeout: 15_000, interval: 100 },
    );
    // The dead letters' announcements leave the webhooks plane's outbox.
    const scraped = await vi.waitFor(
      async () => {
        const found = await scrapeAll();
        expect(metricValue(found.webhooks, METRICS.webhookDeadLetters.name)).toBeGreaterThan(0);
        expect(metricValue(found.gateway, METRICS.realtimeSockets.name, { door: "participant" })).toBe(1);
        return found;
      },
      { timeout: 10_000, interval: 100 },
    );
    const { gateway, control, platform, interview, webhooks } = scraped;

    // Every metric is exposed, with its type, by every process it belongs to.
    for (const definition of Object.values(METRICS)) {
      for (const process of definition.processes) {
        expect(scraped[process].types.get(definition.name), `${definition.name} on ${process}`).toBe(
          definition.type,
        );
      }
    }

    // HTTP: per route template and status, with durations.
    const http = METRICS.httpRequestDuration.name;
    expect(
      metricValue(gateway, `${http}_count`, {
        method: "POST",
        route: "/v1/organizations/:organization_id/apps/:app_id/environments/:environment_id/subjects/batch",
        status: "200",
      }),
    ).toBeGreaterThanOrEqual(2);
    expect(metricValue(gateway, `${http}_count`, { route: "/auth/login", status: "429" })).toBe(1);
    expect(metricValue(gateway, `${http}_sum`)).toBeGreaterThan(0);

    // RPCs on both ends, by method and code.
    const signupRpc = { method: "evalp.control.v1.AuthService/Signup", code: "ok" };
    expect(metricValue(gateway, METRICS.rpcClientCalls.name, signupRpc)).toBe(1);
    expect(metricValue(gateway, `${METRICS.rpcClientDuration.name}_count`, signupRpc)).toBe(1);
    expect(metricValue(control, METRICS.rpcServerCalls.name, signupRpc)).toBe(1);
    expect(metricValue(control, `${METRICS.rpcServerDuration.name}_count`, signupRpc)).toBe(1);
    expect(metricValue(control, `${METRICS.rpcServerDuration.name}_sum`, signupRpc)).toBeGreaterThan(0);
    expect(
      metricValue(control, METRICS.rpcServerCalls.name, { method: "evalp.control.v1.AuthService/Login" }),
    ).toBeGreaterThanOrEqual(5);
    expect(
      samplesOf(control, METRICS.rpcServerCalls.name, { method: "evalp.control.v1.AuthService/Login" }).some(
        (sample) => sample.labels.code !== "ok",
      ),
    ).toBe(true);
    for (const [name, found] of Object.entries({ platform, interview, webhooks })) {
      expect(metricValue(found, METRICS.rpcServerCalls.name), name).toBeGreaterThan(0);
      expect(metricValue(found, `${METRICS.rpcServerDuration.name}_count`), name).toBeGreaterThan(0);
    }
    // Planes call each other: interview asks control and platform when an interview starts.
    for (const [name, found] of Object.entries({ control, platform, interview, webhooks })) {
      expect(metricValue(found, METRICS.rpcClientCalls.name), name).toBeGreaterThan(0);
      expect(metricValue(found, `${METRICS.rpcClientDuration.name}_count`), name).toBeGreaterThan(0);
    }

    // The outbox of every plane that emitted: published, and the lag read from its table.
    for (const [schema, found] of Object.entries({ control, platform, interview, webhooks })) {
      expect(metricValue(found, METRICS.outboxPublished.name, { schema }), schema).toBeGreaterThan(0);
      const lag = metricValue(found, METRICS.outboxLag.name, { schema });
      expect(lag, schema).toBeGreaterThanOrEqual(0);
      expect(Number.isFinite(lag), schema).toBe(true);
    }

    // The durable consumers' backlog, as JetStream counts it.
    const events = { stream: stack.config.EVENTS_STREAM, consumer: EVENTS_CONSUMER };
    const audit = { stream: stack.config.AUDIT_STREAM, consumer: AUDIT_CONSUMER };
    for (const [found, labels] of [
      [webhooks, events],
      [control, audit],
    ] as const) {
      expect(metricValue(found, METRICS.consumerPending.name, labels)).toBeGreaterThanOrEqual(0);
      expect(metricValue(found, METRICS.consumerAckPending.name, labels)).toBeGreaterThanOrEqual(0);
    }

    // Webhook attempts by outcome with their latency, and the dead letters.
    const attempts = `${METRICS.webhookAttemptDuration.name}_count`;
    expect(metricValue(webhooks, attempts, { outcome: "success" })).toBeGreaterThan(0);
    expect(metricValue(webhooks, attempts, { outcome: "http_error" })).toBeGreaterThanOrEqual(2);
    expect(metricValue(webhooks, `${METRICS.webhookAttemptDuration.name}_sum`)).toBeGreaterThan(0);
    expect(metricValue(webhooks, METRICS.webhookDeadLetters.name)).toBeGreaterThanOrEqual(1);

    // The gateway's own: replays, conflicts, refusals, sockets.
    expect(metricValue(gateway, METRICS.idempotencyReplays.name)).toBeGreaterThanOrEqual(1);
    expect(
      metricValue(gateway, METRICS.idempotencyConflicts.name, { reason: "reused" }),
    ).toBeGreaterThanOrEqual(1);
    expect(metricValue(gateway, METRICS.rateLimitRefusals.name, { limit: "login" })).toBe(1);

    // Pools: open connections, the configured size (DATABASE_POOL_SIZE=4 in the stack).
    for (const [pool, found] of Object.entries({ control, platform, interview, webhooks })) {
      expect(metricValue(found, METRICS.poolConnections.name, { pool }), pool).toBeGreaterThan(0);
      expect(metricValue(found, METRICS.poolMax.name, { pool }), pool).toBe(4);
      expect(metricValue(found, METRICS.poolIdle.name, { pool }), pool).toBeGreaterThanOrEqual(0);
      expect(metricValue(found, METRICS.poolWaiting.name, { pool }), pool).toBeGreaterThanOrEqual(0);
    }

    // Readiness: every process ready, each dependency up.
    for (const process of PROCESSES) {
      expect(metricValue(scraped[process], METRICS.ready.name), process).toBe(1);
      const dependencies = samplesOf(scraped[process], METRICS.dependencyUp.name);
      expect(dependencies.length, process).toBeGreaterThan(0);
      expect(
        dependencies.every((sample) => sample.value === 1),
        process,
      ).toBe(true);
      expect(metricValue(scraped[process], METRICS.readinessChanges.name), process).toBe(0);
    }

    // Low cardinality: no label anywhere holds an id, and every platform metric's name says its kind.
    for (const process of PROCESSES) {
      const withIds = scraped[process].samples.filter((sample) =>
        Object.values(sample.labels).some((value) => UUID.test(value)),
      );
      expect(withIds, process).toEqual([]);
    }
    for (const definition of Object.values(METRICS)) {
      if (definition.type === "counter") expect(definition.name).toMatch(/_total$/);
      if (definition.type === "histogram") expect(definition.name).toMatch(/_seconds$/);
    }

    // The socket closed, the gauge comes down.
    await socket.close();
    await vi.waitFor(
      async () =>
        expect(
          metricValue(await scrape(stack.opsUrls.gateway), METRICS.realtimeSockets.name, {
            door: "participant",
          }),
        ).toBe(0),
      { timeout: 5_000, interval: 50 },
    );
  }, 60_000);
});

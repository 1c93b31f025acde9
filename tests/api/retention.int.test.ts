import { controlRetention } from "@evalp/control";
import { interviewRetention } from "@evalp/interview";
import {
  createLogger,
  createMetricsRegistry,
  createPool,
  createRetention,
  type DeletedRows,
  type Pool,
  type RetentionTask,
  writeOutboxMessage,
} from "@evalp/kit";
import { createPlatform, platformRetention } from "@evalp/platform";
import type { Receiver } from "@evalp/testing";
import { startReceiver } from "@evalp/testing";
import { createSecretSealer, webhooksRetention } from "@evalp/webhooks";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { ApiClient } from "./support/client.js";
import { createTenant, ik, type Tenant } from "./support/fixtures.js";
import {
  consentedInterview,
  createEvaluation,
  createSession,
  interviewSetup,
  participantClient,
} from "./support/interview.js";
import { type Stack, useStack } from "./support/stack.js";
import { createEndpoint, importSubjects, setQuota } from "./support/webhooks.js";

// Retention (docs/configuration.md#retention) with its documented defaults: rows are made through
// the API, aged by moving their timestamps back, and then two retention runners per schema (two
// replicas) run a round at the same time.
// Deliveries: 2 attempts 200 ms apart, so a failing endpoint dead-letters at once; an attempt
// may hang for two minutes, so a hanging receiver keeps its delivery pending for the test.
const context = useStack({
  WEBHOOK_RETRY_SCHEDULE_MS: "200",
  WEBHOOK_ALLOW_PRIVATE: "true",
  WEBHOOK_TIMEOUT_MS: "120000",
});
let stack: Stack;
let api: ApiClient;
let tenant: Tenant;
let receiver: Receiver;
const logger = createLogger("retention-test", process.env.TEST_LOG_LEVEL ?? "silent");
/** Two pools per schema: each replica's own connections. */
const replicaPools: Pool[] = [];

type Schema = "control" | "platform" | "interview" | "webhooks";
const SCHEMAS: Schema[] = ["control", "platform", "interview", "webhooks"];
/** Every table retention may touch, per schema, with the column that orders its rows by age. */
const TABLES: Record<Schema, string[]> = {
  control: ["outbox", "sessions", "invitations", "password_resets", "audit_events"],
  platform: ["outbox"],
  interview: ["outbox", "behavioral_events", "interview_entries"],
  webhooks: ["outbox", "webhook_deliveries", "webhook_delivery_attempts", "webhook_events"],
};

beforeAll(async () => {
  ({ stack, api } = context);
  tenant = await createTenant(api);
  receiver = await startReceiver();
  receiver.respond((request) => {
    if (request.path === "/dead") return { status: 500 };
    // Failed, and told to come back in an hour: it waits for a retry all through the test.
    if (request.path === "/wait") return { status: 503, retryAfter: "3600" };
    if (request.path === "/hang") return { delayMs: 120_000 };
    return { status: 204 };
  });
  await createEndpoint(api, tenant, { url: `${receiver.url}/ok`, event_types: ["subject.imported"] });
  await createEndpoint(api, tenant, { url: `${receiver.url}/dead`, event_types: ["subject.imported"] });
  await createEndpoint(api, tenant, { url: `${receiver.url}/wait`, event_types: ["quota.updated"] });
  await createEndpoint(api, tenant, { url: `${receiver.url}/hang`, event_types: ["quota.updated"] });
});
afterAll(async () => {
  await receiver?.close();
  await Promise.all(replicaPools.map((pool) => pool.end()));
});

/** The ids of a table's rows (of the interview entries: their ids too). */
async function ids(schema: Schema, table: string): Promise<Set<string>> {
  const found = await stack.pool(schema).query<{ id: string }>(`SELECT id FROM ${table}`);
  return new Set(found.rows.map((row) => row.id));
}

/** Every table's ids, per schema and table. */
async function snapshot(): Promise<Record<string, Set<string>>> {
  const all: Record<string, Set<string>> = {};
  for (const schema of SCHEMAS) {
    for (const table of TABLES[schema]) all[`${schema}.${table}`] = await ids(schema, table);
  }
  return all;
}

const minus = (a: Set<string>, b: Set<string>) => new Set([...a].filter((id) => !b.has(id)));

/** One generation of everything retention deals with, made through the API; resolves once it settled. */
async function generation(): Promise<void> {
  const quotaUpdates = receiver.at("/hang").length;
  // Control: a session (a login), a password reset and an invitation.
  expect((await api.post("/auth/login", { email: tenant.email, password: tenant.password })).status).toBe(
    200,
  );
  expect((await api.post("/auth/password-reset/request", { email: tenant.email })).status).toBe(202);
  const invited = await api.post(
    `${tenant.org}/memberships`,
    { email: `invitee-${ik()}@example.com`, role: "viewer" },
    { token: tenant.token, idempotencyKey: ik() },
  );
  expect(invited.status).toBe(201);
  // Webhooks: `subject.imported` is delivered (`/ok`) and dead-lettered (`/dead`); `quota.updated`
  // fails and waits for a retry (`/wait`) and stays pending while its attempt hangs (`/hang`).
  await importSubjects(api, tenant, [`emp-${ik()}`]);
  const quotas = await api.get(`${tenant.env}/quotas`, { token: tenant.token });
  await setQuota(api, tenant, "programs", quotas.body.limits.programs + 1);
  // Interview: behavioral events of a participant, and a finished interview's entries.
  const setup = await interviewSetup(api, tenant);
  const evaluation = await createEvaluation(api, setup);
  const session = await createSession(api, tenant, evaluation.id);
  const event = (type: string) => ({ type, occurred_at: new Date().toISOString() });
  const sent = await participantClient(api, session.participant_token).events([
    event("focus"),
    event("blur"),
  ]);
  expect(sent.status).toBe(202);
  const { participant } = await consentedInterview(api, setup);
  await participant.answer("q1", { value: 2 });
  await participant.answer("q2", { option_id: "a" });
  await participant.answer("q3", { value: 4 });
  expect((await participant.finish()).status).toBe(200);
  // Settled: every delivery in the state its endpoint leads to, and every outbox row published.
  await vi.waitFor(
    async () => {
      expect(receiver.at("/hang").length).toBeGreaterThan(quotaUpdates);
      const states = await stack.pool("webhooks").query<{ path: string; status: string }>(
        `SELECT substring(e.url from '/[a-z]+$') AS path, d.status FROM webhook_deliveries d
           JOIN webhook_endpoints e ON e.id = d.endpoint_id`,
      );
      const expected: Record<string, string> = {
        "/ok": "succeeded",
        "/dead": "dead_letter",
        "/wait": "failed",
        "/hang": "pending",
      };
      for (const row of states.rows) expect(row.status, row.path).toBe(expected[row.path]);
      for (const schema of SCHEMAS) {
        const unpublished = await stack
          .pool(schema)
          .query("SELECT 1 FROM outbox WHERE published_at IS NULL AND subject NOT LIKE 'unrouted.%'");
        expect(unpublished.rowCount, schema).toBe(0);
      }
    },
    { timeout: 15_000, interval: 100 },
  );
}

/**
 * Moves the timestamps of the rows that are `fresh` (made since the last ageing) `days` back;
 * tokens and sessions become expired that long ago.
 */
async function age(fresh: Record<string, Set<string>>, days: number): Promise<void> {
  const back = `${days} days`;
  const of = (key: string) => [...(fresh[key] ?? [])];
  for (const schema of SCHEMAS) {
    await stack
      .pool(schema)
      .query(
        "UPDATE outbox SET created_at = created_at - $2::interval, published_at = published_at - $2::interval WHERE id = ANY($1)",
        [of(`${schema}.outbox`), back],
      );
  }
  const control = stack.pool("control");
  for (const table of ["sessions", "invitations", "password_resets"]) {
    await control.query(`UPDATE ${table} SET expires_at = now() - $2::interval WHERE id = ANY($1)`, [
      of(`control.${table}`),
      back,
    ]);
  }
  await control.query("UPDATE audit_events SET created_at = created_at - $2::interval WHERE id = ANY($1)", [
    of("control.audit_events"),
    back,
  ]);
  const interview = stack.pool("interview");
  await interview.query(
    "UPDATE behavioral_events SET created_at = created_at - $2::interval WHERE id = ANY($1)",
    [of("interview.behavioral_events"), back],
  );
  await interview.query(
    `UPDATE interviews SET completed_at = completed_at - $2::interval
     WHERE id IN (SELECT interview_id FROM interview_entries WHERE id = ANY($1))`,
    [of("interview.interview_entries"), back],
  );
  const webhooks = stack.pool("webhooks");
  await webhooks.query(
    `UPDATE webhook_deliveries SET created_at = created_at - $2::interval, updated_at = updated_at - $2::interval,
       delivered_at = delivered_at - $2::interval WHERE id = ANY($1)`,
    [of("webhooks.webhook_deliveries"), back],
  );
  await webhooks.query(
    "UPDATE webhook_delivery_attempts SET attempted_at = attempted_at - $2::interval WHERE id = ANY($1)",
    [of("webhooks.webhook_delivery_attempts"), back],
  );
  await webhooks.query(
    "UPDATE webhook_events SET created_at = created_at - $2::interval WHERE id = ANY($1)",
    [of("webhooks.webhook_events"), back],
  );
}

/** Rows and bytes (table, indexes, TOAST) of every table retention touches. */
async function sizes(): Promise<Record<string, { rows: number; bytes: number }>> {
  const measured: Record<string, { rows: number; bytes: number }> = {};
  for (const schema of SCHEMAS) {
    for (const table of TABLES[schema]) {
      const found = await stack
        .pool(schema)
        .query<{ rows: number; bytes: number }>(
          `SELECT (SELECT count(*) FROM ${table}) AS rows, pg_total_relation_size('${table}') AS bytes`,
        );
      measured[`${schema}.${table}`] = found.rows[0] as { rows: number; bytes: number };
    }
  }
  return measured;
}

/** What a configuration's retention deletes in a schema. */
const TASKS: Record<Schema, (config: Stack["config"]) => RetentionTask[]> = {
  control: controlRetention,
  platform: platformRetention,
  interview: interviewRetention,
  webhooks: (config) => webhooksRetention(config, createSecretSealer(config)),
};

/** Two replicas' retention on one schema, each with its own pool and the same registry kind as a process. */
function replicas(schema: Schema, config: Stack["config"], batchSize: number) {
  return [0, 1].map(() => {
    const pool = createPool({ databaseUrl: stack.config.DATABASE_URL, schema, max: 2 });
    replicaPools.push(pool);
    const registry = createMetricsRegistry(schema);
    const retention = createRetention({
      pool,
      logger,
      registry,
      tasks: TASKS[schema](config),
      batchSize,
      intervalMs: config.RETENTION_INTERVAL_MS,
    });
    return { retention, registry };
  });
}

/** The counter's value per table on a registry. */
async function counted(registry: ReturnType<typeof createMetricsRegistry>): Promise<DeletedRows> {
  const metric = registry.getSingleMetric("evalp_retention_deleted_rows_total");
  const values = metric ? (await metric.get()).values : [];
  return Object.fromEntries(values.map((value) => [String(value.labels.table), value.value]));
}

const sum = (rounds: DeletedRows[], table: string) => rounds.reduce((n, round) => n + (round[table] ?? 0), 0);

describe("retention (docs/configuration.md#retention)", () => {
  it("deletes, with two replicas at once and each row once, what is past its age; never newer, waiting or unpublished rows", async () => {
    const config = stack.config;
    // An outbox row no relay publishes (its subject's root has no stream), made long ago: an
    // unpublished row is never deleted, however old.
    const unpublished = await writeOutboxMessage(stack.pool("control"), {
      type: "test.unrouted",
      subject: "unrouted.retention",
      payload: {},
      createdAt: new Date(Date.now() - 3650 * 86_400_000).toISOString(),
    });

    // The old generation: a day past each age; audit records and interviews ten years old.
    const before0 = await snapshot();
    await generation();
    const old = Object.fromEntries(
      Object.entries(await snapshot()).map(([key, set]) => [key, minus(set, before0[key] ?? new Set())]),
    );
    const ageOf = (days: number) => (key: string) => age({ [key]: old[key] ?? new Set() }, days);
    for (const schema of SCHEMAS) await ageOf(config.RETENTION_OUTBOX_DAYS + 1)(`${schema}.outbox`);
    for (const table of ["sessions", "invitations", "password_resets"]) {
      await ageOf(config.RETENTION_EXPIRED_GRACE_DAYS + 1)(`control.${table}`);
    }
    await ageOf(config.RETENTION_BEHAVIORAL_EVENTS_DAYS + 1)("interview.behavioral_events");
    for (const key of [
      "webhooks.webhook_deliveries",
      "webhooks.webhook_delivery_attempts",
      "webhooks.webhook_events",
    ]) {
      await ageOf(config.RETENTION_WEBHOOK_DELIVERIES_DAYS + 1)(key);
    }
    await ageOf(3650)("control.audit_events");
    await ageOf(3650)("interview.interview_entries");

    // The newer generation: a day short of each age.
    const before1 = await snapshot();
    await generation();
    const newer = Object.fromEntries(
      Object.entries(await snapshot()).map(([key, set]) => [key, minus(set, before1[key] ?? new Set())]),
    );
    const newerOf = (days: number) => (key: string) => age({ [key]: newer[key] ?? new Set() }, days);
    for (const schema of SCHEMAS) await newerOf(config.RETENTION_OUTBOX_DAYS - 1)(`${schema}.outbox`);
    for (const table of ["sessions", "invitations", "password_resets"]) {
      await newerOf(config.RETENTION_EXPIRED_GRACE_DAYS - 1)(`control.${table}`);
    }
    await newerOf(config.RETENTION_BEHAVIORAL_EVENTS_DAYS - 1)("interview.behavioral_events");
    for (const key of [
      "webhooks.webhook_deliveries",
      "webhooks.webhook_delivery_attempts",
      "webhooks.webhook_events",
    ]) {
      await newerOf(config.RETENTION_WEBHOOK_DELIVERIES_DAYS - 1)(key);
    }

    // What must go: the old generation's rows, but of webhooks only deliveries in a final state
    // (with their attempts) and the events none of whose deliveries waits.
    const webhooks = stack.pool("webhooks");
    const waiting = await webhooks.query<{ id: string; event_id: string }>(
      "SELECT id, event_id FROM webhook_deliveries WHERE status IN ('pending', 'failed') AND id = ANY($1)",
      [[...(old["webhooks.webhook_deliveries"] ?? [])]],
    );
    expect(waiting.rows.length).toBeGreaterThanOrEqual(2);
    const waitingIds = new Set(waiting.rows.map((row) => row.id));
    const attemptsOfWaiting = await webhooks.query<{ id: string }>(
      "SELECT id FROM webhook_delivery_attempts WHERE delivery_id = ANY($1)",
      [[...waitingIds]],
    );
    const waitingAttempts = new Set(attemptsOfWaiting.rows.map((row) => row.id));
    const waitingEvents = new Set(waiting.rows.map((row) => row.event_id));
    const gone: Record<string, Set<string>> = {
      "control.outbox": old["control.outbox"] ?? new Set(),
      "control.sessions": old["control.sessions"] ?? new Set(),
      "control.invitations": old["control.invitations"] ?? new Set(),
      "control.password_resets": old["control.password_resets"] ?? new Set(),
      "platform.outbox": old["platform.outbox"] ?? new Set(),
      "interview.outbox": old["interview.outbox"] ?? new Set(),
      "interview.behavioral_events": old["interview.behavioral_events"] ?? new Set(),
      "webhooks.outbox": old["webhooks.outbox"] ?? new Set(),
      "webhooks.webhook_deliveries": minus(old["webhooks.webhook_deliveries"] ?? new Set(), waitingIds),
      "webhooks.webhook_delivery_attempts": minus(
        old["webhooks.webhook_delivery_attempts"] ?? new Set(),
        waitingAttempts,
      ),
      "webhooks.webhook_events": minus(old["webhooks.webhook_events"] ?? new Set(), waitingEvents),
    };
    for (const [key, set] of Object.entries(gone)) expect(set.size, key).toBeGreaterThan(0);
    // Ten-year-old audit records and interview entries exist, and are kept (their settings are unset).
    expect(old["control.audit_events"]?.size).toBeGreaterThan(0);
    expect(old["interview.interview_entries"]?.size).toBeGreaterThan(0);

    const before = await snapshot();
    const sizesBefore = await sizes();
    // Two replicas per schema start their rounds at once; batches of 2 rows, so each round takes
    // many batches and the replicas' turns can interleave.
    const runners = SCHEMAS.map((schema) => ({ schema, replicas: replicas(schema, config, 2) }));
    const rounds = await Promise.all(
      runners.flatMap(({ schema, replicas: pair }) =>
        pair.map(async ({ retention }) => ({ schema, round: await retention.round() })),
      ),
    );
    const after = await snapshot();
    const sizesAfter = await sizes();

    for (const schema of SCHEMAS) {
      const mine = rounds.filter((round) => round.schema === schema).map((round) => round.round.deleted);
      const pair = runners.find((runner) => runner.schema === schema)?.replicas ?? [];
      const countedRows = await Promise.all(pair.map(({ registry }) => counted(registry)));
      for (const table of TABLES[schema]) {
        const key = `${schema}.${table}`;
        const expectedGone = gone[key] ?? new Set<string>();
        // Exactly the rows past their age are gone, and nothing else (audit records still
        // arriving from the other planes may be added meanwhile).
        expect(minus(before[key] ?? new Set(), after[key] ?? new Set()), key).toEqual(expectedGone);
        // Each row deleted once: what the two replicas report adds up to the rows gone, and so
        // do their counters.
        expect(sum(mine, table), key).toBe(expectedGone.size);
        expect(sum(countedRows, table), key).toBe(expectedGone.size);
      }
    }
    // The rows that had to stay, by name.
    expect(after["control.outbox"]?.has(unpublished)).toBe(true);
    for (const id of waitingIds) expect(after["webhooks.webhook_deliveries"]?.has(id)).toBe(true);
    for (const key of Object.keys(newer)) {
      for (const id of newer[key] ?? []) expect(after[key]?.has(id), `${key} ${id}`).toBe(true);
    }
    const active = await stack.db.query("SELECT 1 FROM sessions WHERE expires_at > now()");
    expect(active.rowCount).toBeGreaterThan(0);
    // The platform still answers the tenant, whose session is current.
    expect((await api.get(`${tenant.org}/apps`, { token: tenant.token })).status).toBe(200);

    console.info(
      "retention: rows and bytes per table before → after a round",
      Object.fromEntries(
        Object.entries(sizesBefore).map(([key, size]) => [
          key,
          `${size.rows} rows ${size.bytes} B → ${sizesAfter[key]?.rows} rows ${sizesAfter[key]?.bytes} B`,
        ]),
      ),
    );
  });

  it("deletes audit events and interview entries only once their ages are configured", async () => {
    const configured = {
      ...stack.config,
      RETENTION_AUDIT_EVENTS_DAYS: 3000,
      RETENTION_INTERVIEW_ENTRIES_DAYS: 3000,
    };
    const old = await stack.db.query<{ id: string }>(
      "SELECT id FROM audit_events WHERE created_at < now() - interval '3000 days'",
    );
    const allAudit = await ids("control", "audit_events");
    const oldEntries = await stack.pool("interview").query<{ id: string; interview_id: string }>(
      `SELECT e.id, e.interview_id FROM interview_entries e JOIN interviews i ON i.id = e.interview_id
         WHERE i.completed_at < now() - interval '3000 days'`,
    );
    const allEntries = await ids("interview", "interview_entries");
    expect(old.rows.length).toBeGreaterThan(0);
    expect(allAudit.size).toBeGreaterThan(old.rows.length);
    expect(oldEntries.rows.length).toBeGreaterThan(0);
    expect(allEntries.size).toBeGreaterThan(oldEntries.rows.length);

    const [control] = replicas("control", configured, 100);
    const [interview] = replicas("interview", configured, 100);
    const controlRound = await control?.retention.round();
    const interviewRound = await interview?.retention.round();
    expect(controlRound?.deleted.audit_events).toBe(old.rows.length);
    expect(interviewRound?.deleted.interview_entries).toBe(oldEntries.rows.length);
    const oldAudit = new Set(old.rows.map((row) => row.id));
    const leftAudit = await ids("control", "audit_events");
    expect([...leftAudit].filter((id) => oldAudit.has(id))).toEqual([]);
    for (const id of minus(allAudit, oldAudit)) expect(leftAudit.has(id)).toBe(true);
    // The interviews themselves stay; other interviews keep their entries.
    const interviews = await stack
      .pool("interview")
      .query("SELECT 1 FROM interviews WHERE id = ANY($1)", [
        [...new Set(oldEntries.rows.map((r) => r.interview_id))],
      ]);
    expect(interviews.rowCount).toBeGreaterThan(0);
    const remaining = await ids("interview", "interview_entries");
    expect(remaining).toEqual(minus(allEntries, new Set(oldEntries.rows.map((row) => row.id))));
  });

  it("measured: a round over tens of thousands of aged rows, batch by batch through the retention indexes", async () => {
    const BULK = 20_000;
    // Copies of rows the API made, aged past their settings: published outbox rows of the
    // platform plane and behavioral events of the interview plane.
    const platform = stack.pool("platform");
    const interview = stack.pool("interview");
    await platform.query(
      `INSERT INTO outbox (id, event_type, subject, environment_id, payload, created_at, published_at)
       SELECT gen_random_uuid(), o.event_type, o.subject, o.environment_id, o.payload,
              now() - interval '30 days', now() - interval '30 days'
       FROM (SELECT * FROM outbox WHERE published_at IS NOT NULL LIMIT 1) o, generate_series(1, $1)`,
      [BULK],
    );
    await interview.query(
      `INSERT INTO behavioral_events (id, batch_id, evaluation_id, type, occurred_at, question_id, elapsed_ms, created_at)
       SELECT gen_random_uuid(), e.batch_id, e.evaluation_id, e.type, e.occurred_at, e.question_id, e.elapsed_ms,
              now() - interval '100 days'
       FROM (SELECT * FROM behavioral_events LIMIT 1) e, generate_series(1, $1)`,
      [BULK],
    );
    const measure = async (pool: Pool, table: string) => {
      const found = await pool.query<{ rows: number; bytes: number }>(
        `SELECT (SELECT count(*) FROM ${table}) AS rows, pg_total_relation_size('${table}') AS bytes`,
      );
      return found.rows[0] as { rows: number; bytes: number };
    };
    await platform.query("ANALYZE outbox");
    await interview.query("ANALYZE behavioral_events");
    // The batch's row choice reads the retention index, oldest first, rather than the table.
    const plans = {
      outbox: await platform.query<{ "QUERY PLAN": string }>(
        "EXPLAIN SELECT id FROM outbox WHERE published_at < now() - interval '7 days' ORDER BY published_at LIMIT 1000 FOR UPDATE SKIP LOCKED",
      ),
      behavioral_events: await interview.query<{ "QUERY PLAN": string }>(
        "EXPLAIN SELECT id FROM behavioral_events WHERE created_at < now() - interval '90 days' ORDER BY created_at LIMIT 1000 FOR UPDATE SKIP LOCKED",
      ),
    };
    expect(plans.outbox.rows.map((row) => row["QUERY PLAN"]).join("\n")).toContain("outbox_published");
    expect(plans.behavioral_events.rows.map((row) => row["QUERY PLAN"]).join("\n")).toContain(
      "behavioral_events_created",
    );
    const before = {
      outbox: await measure(platform, "outbox"),
      events: await measure(interview, "behavioral_events"),
    };

    const [a, b] = replicas("platform", stack.config, 1_000);
    const [c, d] = replicas("interview", stack.config, 1_000);
    const started = performance.now();
    const rounds = await Promise.all([a, b, c, d].map((replica) => replica?.retention.round()));
    const roundMs = Math.round(performance.now() - started);
    const deleted = rounds.map((round) => round?.deleted ?? {});
    expect(sum(deleted, "outbox")).toBeGreaterThanOrEqual(BULK);
    expect(sum(deleted, "behavioral_events")).toBe(BULK);
    const after = {
      outbox: await measure(platform, "outbox"),
      events: await measure(interview, "behavioral_events"),
    };
    expect(after.outbox.rows).toBe(before.outbox.rows - sum(deleted, "outbox"));
    expect(after.events.rows).toBe(before.events.rows - BULK);
    // Deleted rows' space is reused by later inserts; VACUUM gives back the empty pages at the end.
    await platform.query("VACUUM outbox");
    await interview.query("VACUUM behavioral_events");
    const vacuumed = {
      outbox: await measure(platform, "outbox"),
      events: await measure(interview, "behavioral_events"),
    };
    console.info("retention measured", {
      rounds_ms: roundMs,
      batch_size: 1_000,
      before,
      after_round: after,
      after_vacuum: vacuumed,
      plans: Object.fromEntries(
        Object.entries(plans).map(([table, plan]) => [
          table,
          plan.rows.map((row) => row["QUERY PLAN"]).join(" | "),
        ]),
      ),
    });
  });

  it("runs in each service's process on its schedule and counts on its ops port", async () => {
    // A platform outbox row published more than the age ago, then a second platform process:
    // its first round runs as soon as it listens.
    const platform = stack.pool("platform");
    const written = await writeOutboxMessage(platform, {
      type: "test.aged",
      subject: "unrouted.aged",
      payload: {},
    });
    await platform.query(
      "UPDATE outbox SET created_at = now() - interval '30 days', published_at = now() - interval '30 days' WHERE id = $1",
      [written],
    );
    const composed = await createPlatform(stack.config, logger, { ports: { port: 0, opsPort: 0 } });
    try {
      const { opsPort } = await composed.listen();
      const line = await vi.waitFor(
        async () => {
          const text = await (await fetch(`http://127.0.0.1:${opsPort}/metrics`)).text();
          const found = text
            .split("\n")
            .find((l) => l.startsWith("evalp_retention_deleted_rows_total{") && l.includes('table="outbox"'));
          expect(found).toBeDefined();
          return found as string;
        },
        { timeout: 10_000, interval: 100 },
      );
      expect(line).toContain('service="platform"');
      expect(Number(line.split(" ").at(-1))).toBeGreaterThanOrEqual(1);
      expect((await platform.query("SELECT 1 FROM outbox WHERE id = $1", [written])).rowCount).toBe(0);
    } finally {
      await composed.shutdown.shutdown("test over");
    }
  });
});

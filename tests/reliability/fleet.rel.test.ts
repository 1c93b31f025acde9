// Two replicas of every process, as `REPLICAS=2 npm start` runs them: realtime across gateways,
// the agent's disconnect pause kept by the interview plane whatever gateway holds (or held) the
// socket, calls spread over every replica of a service, a replica of each service killed under
// load, a credential change seen by every gateway, and a participant session's revocation too.
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { startReceiver } from "@evalp/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { agentInterview } from "../api/support/agent.js";
import { type ApiClient, apiClient } from "../api/support/client.js";
import { createKey, createTenant, expectError, ik, type Tenant } from "../api/support/fixtures.js";
import {
  consentedInterview,
  createEvaluation,
  createSession,
  type InterviewSetup,
  interviewSetup,
  openSocket,
  participantClient,
  type Socket,
} from "../api/support/interview.js";
import { type PlatformProcesses, SERVICES, startProcesses } from "../api/support/processes.js";
import { attempt, type Outcome, runClients } from "./support/load-clients.js";
import { prepareWorkload, type Workload, type WorkloadOp } from "./support/load-workload.js";

/** docs/interview.md#the-agent-protocol: an agent socket closed this long (and not reopened) pauses the interview. */
const PAUSE_MS = 10_000;
/** How long an agent connection outlives the gateway that held it (the interview plane's lease). */
const LEASE_MS = 6_000;
const BOUND_MS = 5_000;

let platform: PlatformProcesses;
/** Requests to each gateway in turn, as a balancer sends them. */
let both: ApiClient;
let gateways: [ApiClient, ApiClient];
let tenant: Tenant;
let setup: InterviewSetup;
let agentKey: string;

beforeAll(async () => {
  platform = await startProcesses({
    replicas: 2,
    env: {
      RATE_LIMIT_PER_MINUTE: "1000000",
      // A change whose call outlived its deadline is tested below; a short one keeps it quick.
      UPSTREAM_TIMEOUT_MS: "2000",
    },
  });
  both = apiClient(platform.urls);
  gateways = [apiClient(platform.urls[0]!), apiClient(platform.urls[1]!)];
  tenant = await createTenant(both);
  setup = await interviewSetup(both, tenant);
  agentKey = (await createKey(both, tenant, ["interviews:agent"], "agent")).secret;
}, 60_000);

afterAll(async () => {
  await platform?.close();
});

const door = (gateway: number, side: "participant" | "agent") =>
  `${platform.urls[gateway]!.replace("http", "ws")}/v1/${side}/realtime`;

/** The next frame that is not a `state` frame (state frames come whenever the revision moves). */
async function nextOther(socket: Socket): Promise<any> {
  for (;;) {
    const frame = await socket.next();
    if (frame.type !== "state") return frame;
  }
}

/** Waits for a `state` frame matching `expected`, skipping others. */
async function stateWith(socket: Socket, expected: Record<string, unknown>): Promise<any> {
  for (;;) {
    const frame = await socket.next();
    if (frame.type === "state" && Object.entries(expected).every(([k, v]) => frame.interview[k] === v))
      return frame;
  }
}

const closed = (socket: Socket) =>
  new Promise<{ code: number; reason: string }>((resolve) =>
    socket.ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })),
  );

/** The operator view's pauses of an evaluation's interview (`status_changed` to `paused`). */
async function pauses(evaluationId: string, api: ApiClient = both) {
  const view = await api.get(`${tenant.env}/evaluations/${evaluationId}/interview?after_seq=0&limit=500`, {
    token: tenant.token,
  });
  expect(view.status, view.text).toBe(200);
  return (view.body.entries as Array<{ kind: string; payload: Record<string, unknown> }>).filter(
    (entry) => entry.kind === "status_changed" && entry.payload.to === "paused",
  );
}

describe("realtime across gateways", () => {
  it("an agent on gateway 1 and a participant on gateway 2 see every frame (docs/interview.md)", async () => {
    const run = await agentInterview(both, setup, agentKey);
    const participantSocket = await openSocket(
      door(1, "participant"),
      run.started.connection.participant_token,
    );
    const agentSocket = await openSocket(door(0, "agent"), run.agentSession.agent_token);
    try {
      // The agent's connection, recorded by the interview plane, reaches the other gateway's socket.
      await stateWith(agentSocket, { agent_connected: true });
      await stateWith(participantSocket, { agent_connected: true });

      // The agent holds the voice, whichever gateway its socket is on.
      participantSocket.ws.send(
        JSON.stringify({
          type: "utterance",
          modality: "voice",
          text: "hello?",
          started_at: new Date().toISOString(),
        }),
      );
      expect(await nextOther(participantSocket)).toMatchObject({ type: "error", code: "agent_owns_voice" });
      participantSocket.ws.send(
        JSON.stringify({
          type: "utterance",
          modality: "text",
          text: "typed",
          started_at: new Date().toISOString(),
        }),
      );
      expect(await nextOther(participantSocket)).toMatchObject({
        type: "entry",
        entry: { speaker: "participant", modality: "text", text: "typed" },
      });

      // An agent turn on gateway 1 reaches the participant's socket on gateway 2 as an entry.
      agentSocket.ws.send(
        JSON.stringify({
          type: "utterance",
          id: "turn-1",
          speaker: "agent",
          modality: "voice",
          text: "Welcome back.",
          started_at: new Date().toISOString(),
        }),
      );
      expect(await nextOther(agentSocket)).toMatchObject({ type: "ack", id: "turn-1" });
      expect(await nextOther(participantSocket)).toMatchObject({
        type: "entry",
        entry: { speaker: "agent", modality: "voice", text: "Welcome back." },
      });

      // A participant's answer through gateway 2 moves the revision: the agent on gateway 1 is told.
      const answered = await gateways[1].post(
        "/v1/participant/interview/answers",
        { question_id: "q1", answer: { value: 3 } },
        { token: run.session.participant_token },
      );
      expect(answered.status, answered.text).toBe(200);
      await stateWith(agentSocket, { revision: answered.body.interview.revision });

      // A newer agent session, created through gateway 2, closes the older socket on gateway 1.
      const agentClosed = closed(agentSocket);
      const newer = await gateways[1].post(
        `${tenant.env}/evaluations/${run.evaluation.id}/agent-sessions`,
        {},
        { token: agentKey, idempotencyKey: ik() },
      );
      expect(newer.status, newer.text).toBe(201);
      expect(await nextOther(agentSocket)).toMatchObject({ type: "error", code: "session_superseded" });
      expect(await agentClosed).toEqual({ code: 4401, reason: "session_superseded" });
      expectError(
        await gateways[0].get("/v1/agent/interview", { token: run.agentSession.agent_token }),
        401,
        "session_superseded",
      );
    } finally {
      await participantSocket.close();
      if (agentSocket.ws.readyState === agentSocket.ws.OPEN) await agentSocket.close();
    }
  }, 30_000);
});

describe("the agent's disconnect pause, kept by the interview plane", () => {
  it("fires once when the agent leaves, and not when it comes back through the other gateway in time", async () => {
    const leaving = await agentInterview(both, setup, agentKey);
    const returning = await agentInterview(both, setup, agentKey);
    const leaver = await openSocket(door(0, "agent"), leaving.agentSession.agent_token);
    const returner = await openSocket(door(0, "agent"), returning.agentSession.agent_token);
    await stateWith(leaver, { agent_connected: true });
    await stateWith(returner, { agent_connected: true });

    await leaver.close();
    await returner.close();
    await sleep(PAUSE_MS / 2);
    const back = await openSocket(door(1, "agent"), returning.agentSession.agent_token);
    await stateWith(back, { agent_connected: true });
    await sleep(PAUSE_MS / 2 + 3_000);

    const left = (await leaving.participant.start()).body.interview;
    expect(left).toMatchObject({
      status: "paused",
      paused_reason: "agent_disconnected",
      agent_connected: false,
    });
    const stayed = (await returning.participant.start()).body.interview;
    expect(stayed).toMatchObject({ status: "in_progress", agent_connected: true });
    await back.close();

    // Once: however many replicas watch the deadline, one pause was written.
    await sleep(1_500);
    const paused = await pauses(leaving.evaluation.id);
    expect(paused).toHaveLength(1);
    expect(paused[0]?.payload).toMatchObject({ from: "active", reason: "agent_disconnected" });
    expect(await pauses(returning.evaluation.id)).toEqual([]);
  }, 40_000);

  for (const signal of ["SIGKILL", "SIGTERM"] as const) {
    it(`does not fire when the agent's gateway goes away (${signal}) and the agent comes back through the other`, async () => {
      const run = await agentInterview(both, setup, agentKey);
      const first = await openSocket(door(0, "agent"), run.agentSession.agent_token);
      await stateWith(first, { agent_connected: true });
      const dropped = closed(first);
      try {
        await platform.kill("gateway", signal, 0);
        await dropped;
        // The agent reconnects as a client of a balancer would: to the gateway still there.
        const again = await openSocket(door(1, "agent"), run.agentSession.agent_token);
        await stateWith(again, { agent_connected: true });
        // Past every deadline the dropped socket could have set: its lease, then the pause.
        await sleep(LEASE_MS + PAUSE_MS + 1_500);
        const snapshot = await gateways[1].post("/v1/participant/interview/start", undefined, {
          token: run.session.participant_token,
        });
        expect(snapshot.body.interview).toMatchObject({ status: "in_progress", agent_connected: true });
        expect(await pauses(run.evaluation.id, gateways[1])).toEqual([]);
        await again.close();
      } finally {
        await platform.start("gateway", 0);
        await platform.ready();
      }
    }, 40_000);
  }
});

/** `rpc_server_calls_total` of one replica, summed over its methods but the health checks. */
async function callsServed(name: (typeof SERVICES)[number], replica: number): Promise<number> {
  const text = await (await fetch(`${platform.opsUrl(name, replica)}/metrics`)).text();
  let sum = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith("rpc_server_calls_total{") || line.includes("HealthService")) continue;
    sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return sum;
}

describe("calls spread over every replica", () => {
  let work: Workload;
  beforeAll(async () => {
    work = await prepareWorkload(both);
  }, 60_000);

  /** A read through each plane: the gateway asks control, platform, interview and webhooks in turn. */
  const planeReads = (): WorkloadOp[] => [
    work.ops.readApp,
    work.ops.readBundle,
    work.ops.readEvaluation,
    work.ops.readWebhook,
  ];

  it("each replica of each service serves at least a third of its service's calls under load", async () => {
    const before = await Promise.all(
      SERVICES.flatMap((name) => [callsServed(name, 0), callsServed(name, 1)]),
    );
    const reads = planeReads();
    let turn = 0;
    const load = runClients({ clients: 8, timeoutMs: BOUND_MS, next: () => reads[turn++ % reads.length]! });
    await sleep(3_000);
    const outcomes = await load.stop();
    expect(outcomes.filter((o) => o.status !== 200).map(describeOutcome)).toEqual([]);
    const after = await Promise.all(SERVICES.flatMap((name) => [callsServed(name, 0), callsServed(name, 1)]));
    SERVICES.forEach((name, i) => {
      const first = after[2 * i]! - before[2 * i]!;
      const second = after[2 * i + 1]! - before[2 * i + 1]!;
      console.info(`${name}: replica 1 served ${first}, replica 2 served ${second}`);
      expect(first + second, name).toBeGreaterThan(50);
      expect(Math.min(first, second), `${name}: ${first} and ${second}`).toBeGreaterThanOrEqual(
        (first + second) / 3,
      );
    });
  }, 30_000);

  it("a replica of each service killed under load: no 5xx to reads, a write answered 503 succeeds once when retried, nothing acknowledged lost", async () => {
    const reads = planeReads();
    let turn = 0;
    const readLoad = runClients({
      clients: 6,
      timeoutMs: BOUND_MS,
      next: () => reads[turn++ % reads.length]!,
    });
    // Writes, each retried with its own Idempotency-Key until it is answered 2xx, as a client should.
    const written: Array<{ externalId: string; key: string; attempts: Outcome[] }> = [];
    let writing = true;
    const writers = Array.from({ length: 3 }, async () => {
      while (writing) {
        const externalId = `fleet-${randomUUID()}`;
        const key = ik();
        const attempts: Outcome[] = [];
        for (;;) {
          const outcome = await attempt(
            {
              name: "import",
              run: (signal) =>
                both.post(
                  `${work.tenant.env}/subjects/batch`,
                  { items: [{ external_id: externalId, identity_mode: "anonymous", profile: {} }] },
                  { apiKey: work.apiKey, idempotencyKey: key, signal },
                ),
            },
            BOUND_MS,
          );
          attempts.push(outcome);
          if (outcome.status !== null && outcome.status < 300) break;
          await sleep(50);
        }
        written.push({ externalId, key, attempts });
      }
    });
    await sleep(700);
    for (const name of SERVICES) {
      expect(await platform.kill(name, "SIGKILL", 0)).toBe("SIGKILL");
      await sleep(400);
    }
    await sleep(1_000);
    for (const name of SERVICES) await platform.start(name, 0);
    await sleep(500);
    writing = false;
    await Promise.all(writers);
    const outcomes = await readLoad.stop();

    // Reads that met a dying replica were answered by the other.
    expect(outcomes.filter((o) => o.status === null || o.status >= 500).map(describeOutcome)).toEqual([]);
    // Every write ended acknowledged, exactly once, whatever its 503s.
    const refused = written.flatMap((w) => w.attempts).filter((o) => o.status !== null && o.status >= 300);
    for (const outcome of refused) expectError(outcome.response!, 503, "unavailable");
    console.info(
      `${written.length} writes, ${refused.length} answers 503 on the way, ${outcomes.length} reads`,
    );
    const db = new pg.Client({ connectionString: platform.env.DATABASE_URL });
    await db.connect();
    try {
      const rows = await db.query<{ external_id: string; n: number | string }>(
        "SELECT external_id, count(*) AS n FROM control.subjects WHERE external_id = ANY($1) GROUP BY external_id",
        [written.map((w) => w.externalId)],
      );
      expect(rows.rows.length).toBe(written.length);
      expect(rows.rows.filter((row) => Number(row.n) !== 1)).toEqual([]);
    } finally {
      await db.end();
    }
  }, 60_000);
});

const describeOutcome = (o: Outcome) =>
  `${o.op} ${o.status ?? o.error} after ${o.endedAt - o.startedAt} ms ${o.response?.text.slice(0, 200) ?? ""}`;

describe("credential changes reach every gateway", () => {
  it("a key revoked through gateway 1 is refused by gateway 2 on the very next request, also when the revoke's answer was lost", async () => {
    const key = await createKey(both, tenant, ["org:read"], "revoked");
    const read = (gateway: number) => gateways[gateway]!.get(tenant.app, { apiKey: key.secret });
    // Gateway 2 has the key's principal cached.
    expect((await read(1)).status).toBe(200);
    expect((await read(1)).status).toBe(200);

    // The revocation commits only after the gateway gave up on it (504): control waits on a
    // lock this test holds past the gateway's deadline.
    const db = new pg.Client({ connectionString: platform.env.DATABASE_URL });
    await db.connect();
    try {
      await db.query("BEGIN");
      await db.query("SELECT id FROM control.api_keys WHERE id = $1 FOR UPDATE", [key.id]);
      const revoke = await gateways[0].post(`${tenant.env}/api-keys/${key.id}/revoke`, undefined, {
        token: tenant.token,
        idempotencyKey: ik(),
      });
      expect(revoke.status, revoke.text).toBe(504);
      await db.query("COMMIT");
      await vi.waitFor(
        async () => {
          const row = await db.query("SELECT revoked_at FROM control.api_keys WHERE id = $1", [key.id]);
          expect(row.rows[0]?.revoked_at).not.toBeNull();
        },
        { timeout: 5_000, interval: 20 },
      );
    } finally {
      await db.end();
    }
    expectError(await read(1), 401, "api_key_revoked");
    expectError(await read(0), 401, "api_key_revoked");
  }, 30_000);
});

/** FinishInterview calls an interview replica answered `ok`: which replica finished an interview. */
async function finishesServed(replica: number): Promise<number> {
  const text = await (await fetch(`${platform.opsUrl("interview", replica)}/metrics`)).text();
  let sum = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith("rpc_server_calls_total{") || !line.includes("ParticipantService/FinishInterview"))
      continue;
    if (line.includes('code="ok"')) sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return sum;
}

describe("scoring on a fleet (docs/results.md)", () => {
  it("an interview finished on an interview replica SIGKILLed at once is scored exactly once, with one event", async () => {
    const receiver = await startReceiver();
    const endpoint = await both.post(
      `${tenant.env}/webhooks`,
      { url: `${receiver.url}/scored`, event_types: ["evaluation.scored"] },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
    const db = new pg.Client({ connectionString: platform.env.DATABASE_URL });
    await db.connect();
    try {
      // Round 1: the platform plane is down, so no replica can have scored before the kill (the
      // job waits, postponed); round 2: the kill races the scoring itself.
      for (const platformDown of [true, false]) {
        const { evaluation, participant } = await consentedInterview(both, setup);
        for (const [question, answer] of [
          ["q1", { value: 4 }],
          ["q2", { option_id: "a" }],
          ["q3", { value: 4 }],
        ] as const) {
          expect((await participant.answer(question, answer)).status).toBe(200);
        }
        if (platformDown) for (const replica of [0, 1]) await platform.kill("platform", "SIGKILL", replica);
        const before = await Promise.all([finishesServed(0), finishesServed(1)]);
        const finished = await participant.finish();
        expect(finished.status, JSON.stringify(finished.body)).toBe(200);
        const after = await Promise.all([finishesServed(0), finishesServed(1)]);
        const handler = after[0] > (before[0] ?? 0) ? 0 : 1;
        expect(after[handler], `FinishInterview calls ${before} → ${after}`).toBe((before[handler] ?? 0) + 1);
        expect(await platform.kill("interview", "SIGKILL", handler)).toBe("SIGKILL");
        if (platformDown) for (const replica of [0, 1]) await platform.start("platform", replica);

        const result = await vi.waitFor(
          async () => {
            const got = await both.get(`${tenant.env}/evaluations/${evaluation.id}/result`, {
              token: tenant.token,
            });
            expect(got.status, JSON.stringify(got.body)).toBe(200);
            return got.body;
          },
          { timeout: 30_000, interval: 200 },
        );
        expect(result).toMatchObject({ evaluation_id: evaluation.id, outcome: "completed" });
        await vi.waitFor(
          () =>
            expect(
              receiver.at("/scored").filter((r) => JSON.parse(r.body).data.evaluation_id === evaluation.id),
            ).not.toHaveLength(0),
          { timeout: 20_000, interval: 200 },
        );
        // The replica comes back; whatever it held was given back, not scored a second time.
        await platform.start("interview", handler);
        await platform.ready();
        const results = await both.get(`${tenant.env}/evaluations/${evaluation.id}/results`, {
          token: tenant.token,
        });
        expect(results.body.items).toEqual([result]);
        const stored = await db.query(
          `SELECT (SELECT count(*) FROM interview.evaluation_results WHERE evaluation_id = $1)::int AS results,
                  (SELECT count(*) FROM interview.scoring_jobs WHERE evaluation_id = $1)::int AS jobs,
                  (SELECT count(DISTINCT id) FROM interview.outbox
                    WHERE event_type = 'evaluation.scored' AND payload->'data'->>'evaluation_id' = $1::text)::int AS events`,
          [evaluation.id],
        );
        expect(stored.rows[0]).toEqual({ results: 1, jobs: 0, events: 1 });
        const deliveries = receiver
          .at("/scored")
          .filter((r) => JSON.parse(r.body).data.evaluation_id === evaluation.id)
          .map((r) => r.headers["webhook-id"]);
        expect(new Set(deliveries).size).toBe(1);
        console.info(
          `scoring (platform ${platformDown ? "down" : "up"}): interview-${handler + 1} killed, scored once`,
        );
      }
    } finally {
      await db.end();
      await receiver.close();
    }
  }, 120_000);
});

describe("participant sessions across gateways (docs/interview.md#participant-sessions)", () => {
  it("a session revoked through gateway 1, or superseded through gateway 2, is refused and its sockets closed with 4401 on both", async () => {
    const started = async () => {
      const evaluation = await createEvaluation(both, setup);
      const session = await createSession(both, tenant, evaluation.id);
      const start = await participantClient(both, session.participant_token).start();
      expect(start.status, start.text).toBe(200);
      return { evaluation, session, connection: start.body.connection as { participant_token: string } };
    };
    const socketsOf = async (token: string) => [
      await openSocket(door(0, "participant"), token),
      await openSocket(door(1, "participant"), token),
    ];

    const revoked = await started();
    const revokedSockets = await socketsOf(revoked.connection.participant_token);
    const revokedCloses = revokedSockets.map(closed);
    const deleted = await gateways[0].call(
      "DELETE",
      `${tenant.env}/evaluations/${revoked.evaluation.id}/participant-sessions/${revoked.session.session_id}`,
      undefined,
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(deleted.status, deleted.text).toBe(204);
    for (const close of revokedCloses) expect(await close).toEqual({ code: 4401, reason: "session_revoked" });
    for (const gateway of gateways) {
      const path = "/v1/participant/interview/transcript";
      expectError(
        await gateway.get(path, { token: revoked.session.participant_token }),
        401,
        "unauthenticated",
      );
    }

    const superseded = await started();
    const supersededSockets = await socketsOf(superseded.connection.participant_token);
    const supersededCloses = supersededSockets.map(closed);
    const newer = await gateways[1].post(
      `${tenant.env}/evaluations/${superseded.evaluation.id}/participant-sessions`,
      {},
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(newer.status, newer.text).toBe(201);
    for (const close of supersededCloses) {
      expect(await close).toEqual({ code: 4401, reason: "session_superseded" });
    }
    for (const gateway of gateways) {
      const path = "/v1/participant/interview/transcript";
      const refused = await gateway.get(path, { token: superseded.session.participant_token });
      expectError(refused, 401, "session_superseded");
    }
    expect((await participantClient(both, newer.body.participant_token).start()).status).toBe(200);
  }, 30_000);
});

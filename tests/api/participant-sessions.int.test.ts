import { redisKeys } from "@evalp/gateway";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type ApiClient, apiClient } from "./support/client.js";
import { createKey, createTenant, expectError, ik, type Tenant } from "./support/fixtures.js";
import {
  createEvaluation,
  createSession,
  type InterviewSetup,
  interviewSetup,
  openSocket,
  participantClient,
  type Socket,
} from "./support/interview.js";
import { type Stack, startStack } from "./support/stack.js";

// Participant sessions (docs/interview.md#participant-sessions): revoked by DELETE or superseded by
// a newer session, their tokens are refused on every gateway and their sockets close with 4401 on
// every gateway; open sockets are capped per session and per client address across both
// gateways. The loopback is a trusted proxy here, so each test names its own client address.
const PER_SESSION = 2;
const PER_ADDRESS = 3;
let stack: Stack;
let api: ApiClient;
/** One client per gateway: a change made through one, its effect seen through the other. */
let gateways: [ApiClient, ApiClient];
let tenant: Tenant;
let setup: InterviewSetup;

beforeAll(async () => {
  stack = await startStack({
    REALTIME_SOCKETS_PER_SESSION: String(PER_SESSION),
    REALTIME_SOCKETS_PER_ADDRESS: String(PER_ADDRESS),
    TRUSTED_PROXIES: "127.0.0.1/32",
  });
  api = apiClient(stack.urls);
  gateways = [apiClient(stack.urls[0] as string), apiClient(stack.urls[1] as string)];
  tenant = await createTenant(api);
  setup = await interviewSetup(api, tenant);
});
afterAll(async () => {
  await stack?.close();
});

let addresses = 0;
/** A client address of its own (X-Forwarded-For through the trusted loopback). */
const newAddress = () => ({ "x-forwarded-for": `203.0.113.${++addresses}` });

/** A started interview: its session, its participant's calls and its connection. */
async function startedSession() {
  const evaluation = await createEvaluation(api, setup);
  const session = await createSession(api, tenant, evaluation.id);
  const participant = participantClient(api, session.participant_token);
  const started = await participant.start();
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  const connection = started.body.connection as { server_url: string; participant_token: string };
  return { evaluation, session, participant, connection };
}

/** The realtime door's address on gateway `index` (the interview plane hands out the first's). */
function doorOf(serverUrl: string, index: 0 | 1): string {
  const door = new URL(serverUrl);
  door.host = new URL(stack.urls[index] as string).host;
  return door.toString();
}

/** Opens a socket on each gateway in turn. */
function openOn(index: 0 | 1, serverUrl: string, token: string, headers: Record<string, string>) {
  return openSocket(doorOf(serverUrl, index), token, "header", headers);
}

/** The close code and reason of a socket, once it closes. */
const closed = (socket: Socket) =>
  new Promise<{ code: number; reason: string }>((resolve) =>
    socket.ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })),
  );

describe("DELETE ENV/evaluations/{evaluation_id}/participant-sessions/{session_id}", () => {
  it("revokes the session at once on every gateway: 401 over HTTP, no upgrade, its sockets closed with 4401", async () => {
    const { evaluation, session, participant, connection } = await startedSession();
    const address = newAddress();
    const sockets = [
      await openOn(0, connection.server_url, connection.participant_token, address),
      await openOn(1, connection.server_url, connection.participant_token, address),
    ];
    const closes = sockets.map(closed);
    const path = `${tenant.env}/evaluations/${evaluation.id}/participant-sessions/${session.session_id}`;
    const active = async () =>
      (await api.get(`${tenant.env}/quotas`, { token: tenant.token })).body.usage.active_participant_sessions;
    const before = await active();

    // Through the first gateway; the socket held by the second closes too.
    const revoked = await gateways[0].call("DELETE", path, undefined, {
      token: tenant.token,
      idempotencyKey: ik(),
    });
    expect(revoked.status, revoked.text).toBe(204);
    expect(revoked.text).toBe("");
    for (const close of closes) expect(await close).toEqual({ code: 4401, reason: "session_revoked" });
    for (const socket of sockets) {
      const frame = await socket.next();
      expect(frame).toMatchObject({ type: "error", code: "unauthenticated" });
    }
    // Both gateways refuse the participant token and the connection token from now on.
    for (const gateway of gateways) {
      const refused = await gateway.get("/v1/participant/interview/transcript", {
        token: session.participant_token,
      });
      expect(expectError(refused, 401, "unauthenticated").message).toBe(
        "This participant session was revoked.",
      );
    }
    expectError(await participant.start(), 401, "unauthenticated");
    for (const index of [0, 1] as const) {
      await expect(
        openOn(index, connection.server_url, connection.participant_token, newAddress()),
      ).rejects.toMatchObject({ status: 401 });
    }

    // Again: the same answer (DELETE is idempotent); another key is a new request.
    const again = await gateways[1].call("DELETE", path, undefined, {
      token: tenant.token,
      idempotencyKey: ik(),
    });
    expect(again.status).toBe(204);
    // It no longer counts against active_participant_sessions.
    expect(await active()).toBe(before - 1);
  });

  it("404s a session of another evaluation, or none; requires evaluations:write and an Idempotency-Key", async () => {
    const { evaluation, session, participant } = await startedSession();
    const other = await createEvaluation(api, setup);
    const elsewhere = await api.call(
      "DELETE",
      `${tenant.env}/evaluations/${other.id}/participant-sessions/${session.session_id}`,
      undefined,
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(expectError(elsewhere, 404, "not_found").context).toEqual({ resource: "participant_session" });
    const unknown = await api.call(
      "DELETE",
      `${tenant.env}/evaluations/${evaluation.id}/participant-sessions/${crypto.randomUUID()}`,
      undefined,
      { token: tenant.token, idempotencyKey: ik() },
    );
    expectError(unknown, 404, "not_found");
    const path = `${tenant.env}/evaluations/${evaluation.id}/participant-sessions/${session.session_id}`;
    const reader = await createKey(api, tenant, ["evaluations:read"]);
    const denied = await api.call("DELETE", path, undefined, { token: reader.secret, idempotencyKey: ik() });
    expect(expectError(denied, 403, "forbidden").context).toEqual({ required_scope: "evaluations:write" });
    const noKey = await api.call("DELETE", path, undefined, { token: tenant.token });
    expect(noKey.status).toBe(422);
    // None of these revoked it.
    expect((await participant.transcript()).status).toBe(200);
  });
});

describe("a new participant session", () => {
  it("supersedes the evaluation's older one: its token refused (session_superseded), its sockets closed with 4401 on both gateways", async () => {
    const first = await startedSession();
    const address = newAddress();
    const sockets = [
      await openOn(0, first.connection.server_url, first.connection.participant_token, address),
      await openOn(1, first.connection.server_url, first.connection.participant_token, address),
    ];
    const closes = sockets.map(closed);

    // Created through the second gateway.
    const created = await gateways[1].post(
      `${tenant.env}/evaluations/${first.evaluation.id}/participant-sessions`,
      {},
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(created.status, created.text).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual([
      "expires_at",
      "participant_token",
      "session_id",
      "url",
    ]);
    // The hosted interview page, the token in the fragment (docs/pages.md).
    expect(new URL(created.body.url).hash).toBe(`#${created.body.participant_token}`);
    expect(new URL(created.body.url).pathname).toBe("/interview");
    for (const close of closes) expect(await close).toEqual({ code: 4401, reason: "session_superseded" });
    for (const socket of sockets) {
      expect(await socket.next()).toMatchObject({ type: "error", code: "session_superseded" });
    }
    for (const gateway of gateways) {
      expectError(
        await gateway.get("/v1/participant/interview/transcript", { token: first.session.participant_token }),
        401,
        "session_superseded",
      );
    }
    await expect(
      openOn(0, first.connection.server_url, first.connection.participant_token, newAddress()),
    ).rejects.toMatchObject({ status: 401 });

    // The new session carries the same interview on, and its socket opens.
    const second = participantClient(api, created.body.participant_token);
    const resumed = await second.start();
    expect(resumed.status, resumed.text).toBe(200);
    const socket = await openOn(
      1,
      resumed.body.connection.server_url,
      resumed.body.connection.participant_token,
      address,
    );
    await socket.close();
  });
});

describe("realtime socket caps", () => {
  it("refuses a participant session's socket past REALTIME_SOCKETS_PER_SESSION, counted across both gateways", async () => {
    const { connection } = await startedSession();
    const open = [
      await openOn(0, connection.server_url, connection.participant_token, newAddress()),
      await openOn(1, connection.server_url, connection.participant_token, newAddress()),
    ];
    expect(open).toHaveLength(PER_SESSION);
    for (const index of [0, 1] as const) {
      const refusal = await openOn(
        index,
        connection.server_url,
        connection.participant_token,
        newAddress(),
      ).then(
        () => {
          throw new Error("a socket past the cap was opened");
        },
        (error: { status: number; body: string }) => error,
      );
      expect(refusal.status).toBe(429);
      expect(JSON.parse(refusal.body).detail).toMatchObject({
        code: "rate_limited",
        context: { limit: PER_SESSION, reason: "sockets_per_session" },
      });
    }
    // A socket that closes frees its place.
    await open[0]?.close();
    const reopened = await vi.waitFor(
      () => openOn(1, connection.server_url, connection.participant_token, newAddress()),
      { timeout: 10_000, interval: 100 },
    );
    await reopened.close();
    await open[1]?.close();
  });

  it("does not count sockets whose gateway stopped renewing them (a replica that died)", async () => {
    const { session, connection } = await startedSession();
    // As a gateway that died leaves them: a full session's worth of slots, their leases lapsed.
    const key = redisKeys(stack.config.REDIS_KEY_PREFIX).sessionSockets(session.session_id);
    const [seconds] = await stack.redis.time();
    const lapsed = Number(seconds) * 1000 - 1000;
    for (let i = 0; i < PER_SESSION; i++) await stack.redis.zadd(key, lapsed, `dead-gateway-${i}`);
    await stack.redis.pexpire(key, 60_000);
    const socket = await openOn(0, connection.server_url, connection.participant_token, newAddress());
    await socket.close();
  });

  it("refuses a client address's socket past REALTIME_SOCKETS_PER_ADDRESS, whatever its sessions, across both gateways", async () => {
    const address = newAddress();
    const sessions = await Promise.all([startedSession(), startedSession()]);
    const open: Socket[] = [];
    for (const [i, { connection }] of [sessions[0], sessions[0], sessions[1]].entries()) {
      if (!connection) throw new Error("no session");
      open.push(
        await openOn(i % 2 === 0 ? 0 : 1, connection.server_url, connection.participant_token, address),
      );
    }
    expect(open).toHaveLength(PER_ADDRESS);
    const last = sessions[1]?.connection;
    if (!last) throw new Error("no session");
    const refusal = await openOn(1, last.server_url, last.participant_token, address).then(
      () => {
        throw new Error("a socket past the cap was opened");
      },
      (error: { status: number; body: string }) => error,
    );
    expect(refusal.status).toBe(429);
    expect(JSON.parse(refusal.body).detail).toMatchObject({
      code: "rate_limited",
      context: { limit: PER_ADDRESS, reason: "sockets_per_address" },
    });
    // Another address is not held back by this one.
    const elsewhere = await openOn(0, last.server_url, last.participant_token, newAddress());
    await elsewhere.close();
    for (const socket of open) await socket.close();
  });
});

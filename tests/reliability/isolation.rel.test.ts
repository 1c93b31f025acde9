import { randomUUID } from "node:crypto";
import { AGENT_SCOPE, signParticipantToken } from "@evalp/kit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { agentInterview } from "../api/support/agent.js";
import { type ApiClient, type ApiResponse, apiClient } from "../api/support/client.js";
import { createKey, ik, signUp } from "../api/support/fixtures.js";
import { openSocket } from "../api/support/interview.js";
import { sentMail, tokenIn } from "../api/support/mail.js";
import { type Stack, startStack } from "../api/support/stack.js";
import { changedTables, databaseChecksum, QUIET_ENV, settle } from "./support/fuzz-checksum.js";
import { expectErrorShape } from "./support/fuzz-contract.js";
import { exampleOf, fillPath, loadOperations, type Operation, resourceOf } from "./support/fuzz-openapi.js";
import { createSecretHarvester } from "./support/isolation-secrets.js";
import { KEY_SCOPES, type PopulatedTenant, populatedTenant } from "./support/isolation-tenants.js";

const lines: string[] = [];
const secrets = createSecretHarvester();
let stack: Stack;
let api: ApiClient;
let operations: Operation[];
/** Tenant A acts; tenant B owns what A must not reach. */
let a: PopulatedTenant;
let b: PopulatedTenant;
/** A second environment of A's app and a second app of A's organization. */
let otherEnvironment: string;
let otherApp: string;
/** A's key with the agent scope, which is held alone. */
let agentKey: string;
/** A's participant and agent, in an interview of their own. */
let ours: Awaited<ReturnType<typeof agentInterview>>;

beforeAll(async () => {
  stack = await startStack(QUIET_ENV, { logLines: lines });
  api = secrets.wrap(apiClient(stack.urls));
  [a, b] = await Promise.all([populatedTenant(api), populatedTenant(api)]);
  const auth = { token: a.tenant.token };
  const [environment, app] = await Promise.all([
    api.post(
      `${a.tenant.app}/environments`,
      { slug: "staging", name: "Staging" },
      { ...auth, idempotencyKey: ik() },
    ),
    api.post(`${a.tenant.org}/apps`, { slug: "second", name: "Second" }, { ...auth, idempotencyKey: ik() }),
  ]);
  expect([environment.status, app.status]).toEqual([201, 201]);
  otherEnvironment = environment.body.id;
  otherApp = app.body.id;
  agentKey = (await createKey(api, a.tenant, [AGENT_SCOPE], "agent")).secret;
  // A consented interview with an agent in each tenant, and a proposal pending in B's.
  const setupOf = (tenant: PopulatedTenant) => ({
    tenant: tenant.tenant,
    subjectId: tenant.ids.subject as string,
    bundleId: tenant.ids.bundle as string,
  });
  let theirs: Awaited<ReturnType<typeof agentInterview>>;
  [ours, theirs] = await Promise.all([agentInterview(api, setupOf(a)), agentInterview(api, setupOf(b))]);
  const snapshot = await theirs.agent.snapshot();
  const proposed = await theirs.agent.command({
    type: "propose",
    id: "p1",
    question_id: "q1",
    expected_revision: snapshot.body.interview.revision,
    proposed_answer: { value: 5 },
    confirmation_text: "Five years, is that right?",
  });
  expect(proposed.status, JSON.stringify(proposed.body)).toBe(200);
  b.ids.proposal = proposed.body.entry.id;
  operations = await loadOperations(api);
});

afterAll(async () => {
  await stack?.close();
});

/** A credential as the client sends it, and its name in reports. */
type Credential = { name: string; token: string };

/** One request and what the contract answers it. */
type Case = {
  operation: Operation;
  params: Record<string, string>;
  /** Resource ids the body's references take (its `*_id` fields). */
  refs: Record<string, string>;
  credential: Credential;
  status: number;
  code: string;
  /**
   * A key may lack the route's scope (`interviews:agent` is held alone): then 403 `forbidden`
   * with `required_scope`, decided before any lookup, is as good an answer; `group` names the
   * cases of which one key must get `status`.
   */
  group?: string;
};

function requestOf(c: Case) {
  const { operation } = c;
  const query = operation.query
    .filter((p) => p.required)
    .map((p) => `${p.name}=${encodeURIComponent(String(exampleOf(p.schema, c.refs, p.name)))}`);
  const path = `${fillPath(operation.path, c.params)}${query.length > 0 ? `?${query.join("&")}` : ""}`;
  const body = operation.body ? exampleOf(operation.body.schema, c.refs) : undefined;
  return { method: operation.method, path, body };
}

async function send(c: Case): Promise<ApiResponse> {
  const { method, path, body } = requestOf(c);
  return api.call(method, path, body, { token: c.credential.token, idempotencyKey: ik() });
}

/** Sends every case (a few at a time) and asserts each answer: status, code, the contract's shape. */
async function expectAnswers(cases: Case[]): Promise<void> {
  expect(cases.length).toBeGreaterThan(0);
  const pending = [...cases];
  const answered = new Map<string, string[]>();
  const worker = async () => {
    for (let c = pending.shift(); c !== undefined; c = pending.shift()) {
      const { method, path, body } = requestOf(c);
      const what = `${method} ${path} as ${c.credential.name}, body ${JSON.stringify(body)?.slice(0, 300)}`;
      const response = await send(c);
      const scoped = c.group !== undefined && response.body?.detail?.context?.required_scope !== undefined;
      if (scoped) expectErrorShape(response, 403, "forbidden", what);
      else expectErrorShape(response, c.status, c.code, what);
      if (c.group) answered.set(c.group, [...(answered.get(c.group) ?? []), scoped ? "scope" : c.code]);
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  for (const [group, codes] of answered) expect(codes, group).toContain("not_found");
}

/** The operator routes of the API (not the participant's, the agent's or `/auth/*`). */
const operatorRoutes = () => operations.filter((operation) => operation.door === "operator");

/** A's ids for the parameters before `from`, B's from there on. */
function mixedParams(operation: Operation, from: number): Record<string, string> {
  return Object.fromEntries(
    operation.pathParams.map((name, index) => {
      const resource = resourceOf(name, operation.path) ?? name;
      const owner = index < from ? a : b;
      return [name, owner.ids[resource] ?? randomUUID()];
    }),
  );
}

/** Body fields that name a resource (`subject_id`, `*_version_id`, …). */
function bodyReferences(operation: Operation): string[] {
  return Object.entries(operation.body?.schema.properties ?? {})
    .filter(([name, schema]) => schema.format === "uuid" && resourceOf(name) !== undefined)
    .map(([name]) => name);
}

describe("tenant isolation (docs/errors.md, docs/authentication.md)", () => {
  it("answers every route 404 with another organization's ids, in its path or its body, for a session and an API key, changing nothing", async () => {
    const before = await settle(stack);
    const session = { name: "A's session", token: a.tenant.token };
    const keys = [
      { name: "A's API key", token: a.apiKey },
      { name: "A's agent key", token: agentKey },
    ];
    const cases: Case[] = [];
    const notFound = { refs: b.ids, status: 404, code: "not_found" };
    const routes = operatorRoutes();
    for (const operation of routes.filter((o) => o.pathParams.length > 0)) {
      // Every prefix of A's own ids followed by B's: B's organization, B's app in A's organization, …
      operation.pathParams.forEach((name, from) => {
        const params = mixedParams(operation, from);
        cases.push({ operation, params, ...notFound, credential: session });
        if (from === 0) {
          for (const credential of keys) cases.push({ operation, params, ...notFound, credential });
        } else if (name === "app_id" || name === "environment_id") {
          // docs/authentication.md: a key meets another app or environment of its own organization with 403.
          for (const credential of keys) {
            cases.push({ operation, params, refs: b.ids, credential, status: 403, code: "forbidden" });
          }
        } else {
          const group = `${operation.method} ${operation.path} with B's ${name}`;
          for (const credential of keys) cases.push({ operation, params, ...notFound, credential, group });
        }
      });
    }
    // A's own path, and B's resources named in the body.
    for (const operation of routes.filter((o) => bodyReferences(o).length > 0)) {
      const params = mixedParams(operation, operation.pathParams.length);
      cases.push({ operation, params, ...notFound, credential: session });
      if (operation.pathParams.length === 0) continue;
      const group = `${operation.method} ${operation.path} with B's ${bodyReferences(operation).join(", ")}`;
      for (const credential of keys) cases.push({ operation, params, ...notFound, credential, group });
    }
    expect(new Set(cases.map((c) => c.operation)).size).toBeGreaterThan(45);
    await expectAnswers(cases);
    expect(changedTables(before, await databaseChecksum(stack))).toEqual([]);
  });

  it("answers a key 403 in another app or environment of its organization, and a session 404 for resources of another environment or app", async () => {
    const before = await settle(stack);
    const cases: Case[] = [];
    const key = { name: "A's API key", token: a.apiKey };
    const session = { name: "A's session", token: a.tenant.token };
    for (const operation of operatorRoutes()) {
      const params = mixedParams(operation, operation.pathParams.length);
      const { pathParams } = operation;
      const elsewhere = pathParams.includes("environment_id")
        ? { ...params, environment_id: otherEnvironment }
        : pathParams.includes("app_id")
          ? { ...params, app_id: otherApp }
          : null;
      if (!elsewhere) continue;
      cases.push({
        operation,
        params: elsewhere,
        refs: a.ids,
        credential: key,
        status: 403,
        code: "forbidden",
      });
      // A session reaches the other environment (or app), but not A's resources through it.
      const scope = pathParams.includes("environment_id") ? "environment_id" : "app_id";
      const namesResource = pathParams.indexOf(scope) < pathParams.length - 1;
      if (namesResource || bodyReferences(operation).length > 0) {
        cases.push({
          operation,
          params: elsewhere,
          refs: a.ids,
          credential: session,
          status: 404,
          code: "not_found",
        });
      }
    }
    await expectAnswers(cases);
    expect(changedTables(before, await databaseChecksum(stack))).toEqual([]);
  });
});

describe("interview isolation (docs/interview.md)", () => {
  it("answers a participant and an agent 404 for another interview's proposal, changing nothing", async () => {
    const before = await settle(stack);
    const participant = { name: "A's participant", token: ours.session.participant_token };
    const cases = operations
      .filter((operation) => operation.door === "participant" && operation.pathParams.length > 0)
      .map((operation) => ({
        operation,
        params: mixedParams(operation, 0),
        refs: b.ids,
        credential: participant,
        status: 404,
        code: "not_found",
      }));
    expect(cases.length).toBeGreaterThan(1);
    await expectAnswers(cases);
    const resolved = await ours.agent.command({
      type: "resolve",
      id: "r1",
      proposal_id: b.ids.proposal,
      decision: "confirm",
      evidence_entry_id: b.ids.proposal,
    });
    expectErrorShape(resolved, 404, "not_found", "A's agent resolving B's proposal");
    expect(changedTables(before, await databaseChecksum(stack))).toEqual([]);
  });
});

describe("credentials that no longer open anything (docs/errors.md, docs/authentication.md)", () => {
  it("answers a revoked API key 401 api_key_revoked on every operator route", async () => {
    const revoked = await createKey(api, a.tenant, KEY_SCOPES, "revoked");
    const revoke = await api.post(`${a.tenant.env}/api-keys/${revoked.id}/revoke`, undefined, {
      token: a.tenant.token,
      idempotencyKey: ik(),
    });
    expect(revoke.status).toBe(200);
    const credential = { name: "a revoked API key", token: revoked.secret };
    await expectAnswers(
      operatorRoutes().map((operation) => ({
        operation,
        params: mixedParams(operation, operation.pathParams.length),
        refs: a.ids,
        credential,
        status: 401,
        code: "api_key_revoked",
      })),
    );
  });

  it("answers a logged-out session 401 unauthenticated on every operator route", async () => {
    const login = await api.post("/auth/login", { email: a.tenant.email, password: a.tenant.password });
    expect(login.status).toBe(200);
    const token = login.body.access_token as string;
    expect((await api.post("/auth/logout", undefined, { token })).status).toBe(204);
    const credential = { name: "a logged-out session", token };
    await expectAnswers(
      operatorRoutes().map((operation) => ({
        operation,
        params: mixedParams(operation, operation.pathParams.length),
        refs: a.ids,
        credential,
        status: 401,
        code: "unauthenticated",
      })),
    );
  });

  it("answers participant, connection and agent tokens past their exp 401 token_expired", async () => {
    const claims = {
      sessionId: a.participant.sessionId,
      evaluationId: a.ids.evaluation as string,
      environmentId: a.tenant.environmentId,
    };
    const past = new Date(Date.now() - 1000);
    const sign = (use: "participant" | "connection" | "agent") =>
      signParticipantToken(stack.config.JWT_SECRET, use, claims, past);
    const [participant, connection, agent] = await Promise.all([
      sign("participant"),
      sign("connection"),
      sign("agent"),
    ]);
    for (const token of [participant, connection, agent]) secrets.record(token);
    const cases = operations.flatMap((operation): Case[] => {
      const token = { participant, agent }[operation.door as "participant" | "agent"];
      if (!token) return [];
      const params = Object.fromEntries(operation.pathParams.map((name) => [name, randomUUID()]));
      const credential = { name: `an expired ${operation.door} token`, token };
      return [{ operation, params, refs: a.ids, credential, status: 401, code: "token_expired" }];
    });
    expect(cases.length).toBeGreaterThan(8);
    await expectAnswers(cases);
    const door = stack.config.REALTIME_URL;
    const refused = await openSocket(door, connection).then(
      () => null,
      (error: { status: number; body: string }) => error,
    );
    expect(refused?.status).toBe(401);
    expect(JSON.parse(refused?.body ?? "{}").detail).toMatchObject({ code: "token_expired" });
  });
});

describe("logs (docs/configuration.md)", () => {
  it("hold none of the passwords, tokens, keys and secrets this file created or sent", async () => {
    // Mailed tokens, used: an invitation accepted, a password reset confirmed.
    const invitee = `invitee-${randomUUID().slice(0, 8)}@example.com`;
    const invited = await api.post(
      `${a.tenant.org}/memberships`,
      { email: invitee, role: "member" },
      { token: a.tenant.token, idempotencyKey: ik() },
    );
    expect(invited.status).toBe(201);
    const resetting = await signUp(api, "Reset");
    expect((await api.post("/auth/password-reset/request", { email: resetting.email })).status).toBe(202);
    const mails = await vi.waitFor(() => {
      const sent = sentMail(stack.config.MAIL_DIR);
      const invitation = sent.find((mail) => mail.to === invitee);
      const reset = sent.find((mail) => mail.to === resetting.email);
      if (!invitation || !reset) throw new Error("mail not sent yet");
      return { invitation, reset };
    });
    const accepted = await api.post(
      "/v1/invitations/accept",
      { token: tokenIn(mails.invitation), password: "invitee password 1234" },
      { idempotencyKey: ik() },
    );
    expect(accepted.status).toBe(200);
    const reset = await api.post(
      "/auth/password-reset/confirm",
      { token: tokenIn(mails.reset), password: "a brand new password 5678" },
      { idempotencyKey: ik() },
    );
    expect(reset.status).toBe(200);
    secrets.harvestMail(stack.config.MAIL_DIR);
    secrets.record(stack.config.JWT_SECRET);
    expect(secrets.secrets.size).toBeGreaterThan(20);
    expect(lines.length).toBeGreaterThan(500);
    secrets.expectAbsentFrom(lines);
  });
});

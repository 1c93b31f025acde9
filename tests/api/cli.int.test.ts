import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { chmod, mkdtemp, readFile, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { verifyWebhook } from "@evalp/client";
import type { Receiver } from "@evalp/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { ApiClient } from "./support/client.js";
import { startCheckedReceiver } from "./support/event-catalog.js";
import { signUp, type Tenant } from "./support/fixtures.js";
import { consentedInterview, createSubject, interviewSetup, publishedBundle } from "./support/interview.js";
import { createBundle } from "./support/platform.js";
import { type Stack, useStack } from "./support/stack.js";
import { createEndpoint } from "./support/webhooks.js";

// The operator CLI as a person or a script runs it: the built `evalp` in its own process, its
// config file in a fresh folder, against the real platform.
const MAIN = fileURLToPath(new URL("../../packages/cli/bin/evalp.mjs", import.meta.url));

const context = useStack({ WEBHOOK_ALLOW_PRIVATE: "true" });
let stack: Stack;
let api: ApiClient;
let receiver: Receiver;
let home: string;
let configFile: string;
let user: Awaited<ReturnType<typeof signUp>>;
/** The ids the CLI created, filled in as the tests go (they run in order, as an operator would). */
const ids = { org: "", app: "", env: "" };

beforeAll(async () => {
  ({ stack, api } = context);
  receiver = await startCheckedReceiver(api);
  home = await mkdtemp(join(tmpdir(), "evalp-cli-home-"));
  configFile = join(home, ".config", "evalp", "config.json");
  user = await signUp(api);
});
afterAll(async () => {
  await receiver?.close();
});

type Run = { code: number | null; stdout: string; stderr: string };

/** Runs `evalp …` with only the environment given (and HOME pointing at the test's folder). */
async function evalp(
  args: string[],
  options: { env?: Record<string, string>; stdin?: string } = {},
): Promise<Run> {
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: { PATH: process.env.PATH ?? "", HOME: home, EVALP_URL: stack.url, ...options.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdin.end(options.stdin ?? "");
  const [code] = (await once(child, "close")) as [number | null];
  return { code, stdout, stderr };
}

/** `evalp --json …` in the environment of the ids created so far, its stdout parsed. */
async function evalpJson<T = any>(args: string[], env: Record<string, string> = {}): Promise<T> {
  const run = await evalp(["--json", ...args], { env: { ...scopeEnv(), ...env } });
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as T;
}

function scopeEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries({ EVALP_APP: ids.app, EVALP_ENV: ids.env }).filter(([, value]) => value !== ""),
  );
}

/** The tenant the CLI built, for the API helpers that set up what the CLI does not create. */
function tenant(): Tenant {
  const org = `/v1/organizations/${ids.org}`;
  const app = `${org}/apps/${ids.app}`;
  return {
    ...user,
    organizationId: ids.org,
    appId: ids.app,
    environmentId: ids.env,
    org,
    app,
    env: `${app}/environments/${ids.env}`,
  };
}

/** An error line as the CLI prints it: code, message and the request's id. */
const ERROR_LINE = (code: string) => new RegExp(`^error ${code}: .+ \\(request [A-Za-z0-9._-]+\\)\\n$`);

describe("evalp", () => {
  it("logs in with a password on stdin, keeping the token in a 0600 file, never printing it", async () => {
    const run = await evalp(["login", "--email", user.email, "--password-stdin"], {
      stdin: `${user.password}\n`,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(user.email);
    const config = JSON.parse(await readFile(configFile, "utf8"));
    expect(config).toMatchObject({ url: stack.url, org: user.organizationId, token: expect.any(String) });
    expect(run.stdout + run.stderr).not.toContain(config.token);
    expect((await stat(configFile)).mode & 0o777).toBe(0o600);
    expect((await stat(join(home, ".config", "evalp"))).mode & 0o777).toBe(0o700);
    ids.org = config.org;

    const me = await evalpJson(["whoami"]);
    expect(me).toMatchObject({ kind: "session", email: user.email });
    expect(me.scopes).toContain("keys:write");
  });

  it("refuses a wrong password with the API's code and request id", async () => {
    const run = await evalp(["login", "--email", user.email, "--password-stdin"], {
      stdin: "not the password",
      env: { EVALP_CONFIG: join(home, "other.json") },
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(ERROR_LINE("invalid_credentials"));
  });

  it("creates and lists apps and environments", async () => {
    const app = await evalpJson(["apps", "create", "--slug", "survey", "--name", "Survey"]);
    expect(app).toMatchObject({ slug: "survey", name: "Survey", organization_id: ids.org });
    ids.app = app.id;
    expect((await evalpJson<{ id: string }[]>(["apps", "list"])).map((item) => item.id)).toEqual([app.id]);
    expect(await evalpJson(["apps", "get"])).toEqual(app);

    const env = await evalpJson(["environments", "create", "--slug", "production", "--name", "Production"]);
    expect(env).toMatchObject({ app_id: app.id, slug: "production" });
    ids.env = env.id;
    expect((await evalpJson<{ id: string }[]>(["environments", "list"])).map((item) => item.id)).toEqual([
      env.id,
    ]);

    // People get a table: a header, then one line per app.
    const table = await evalp(["apps", "list"]);
    expect(table.stdout.split("\n")[0]).toMatch(/^ID +SLUG +NAME +CREATED_AT$/);
    expect(table.stdout).toContain(app.id);
  });

  it("creates a key (its secret shown once), lists it without the secret, and revokes it: the key then gets 401", async () => {
    const created = await evalpJson(["keys", "create", "--name", "ci", "--scope", "webhooks:read,org:read"]);
    expect(created.secret).toMatch(/^evk_[A-Za-z0-9]{8}_[A-Za-z0-9]{32}$/);
    expect(created.scopes).toEqual(["webhooks:read", "org:read"]);

    const listed = await evalp(["--json", "keys", "list"], { env: scopeEnv() });
    expect(JSON.parse(listed.stdout).map((key: { id: string }) => key.id)).toEqual([created.id]);
    expect(listed.stdout).not.toContain(created.secret);

    const asKey = { EVALP_API_KEY: created.secret };
    expect(await evalpJson(["whoami"], asKey)).toMatchObject({ kind: "api_key", api_key_name: "ci" });
    expect(await evalpJson(["webhooks", "list"], asKey)).toEqual([]);

    const revoked = await evalpJson(["keys", "revoke", created.id]);
    expect(revoked.revoked_at).toEqual(expect.any(String));
    await vi.waitFor(
      async () => {
        const refused = await evalp(["webhooks", "list"], { env: { ...scopeEnv(), ...asKey } });
        expect(refused.code).toBe(1);
        expect(refused.stderr).toMatch(ERROR_LINE("api_key_revoked"));
      },
      { timeout: 10_000, interval: 200 },
    );
  });

  it("lists, tests and rotates webhook endpoints; lists and replays deliveries", async () => {
    const endpoint = await createEndpoint(api, tenant(), { url: `${receiver.url}/cli`, event_types: ["*"] });
    const listed = await evalp(["--json", "webhooks", "list"], { env: scopeEnv() });
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({ id: endpoint.id, url: endpoint.url }),
    ]);
    expect(listed.stdout).not.toContain(endpoint.secret);

    const test = await evalpJson(["webhooks", "test", endpoint.id]);
    expect(test).toMatchObject({ endpoint_id: endpoint.id, event_type: "webhook.test" });
    await vi.waitFor(() => expect(receiver.at("/cli")).toHaveLength(1), { timeout: 10_000, interval: 50 });

    const deliveries = await evalpJson<{ id: string; status: string }[]>([
      "deliveries",
      "list",
      "--endpoint",
      endpoint.id,
    ]);
    expect(deliveries.map((delivery) => delivery.id)).toContain(test.id);

    const replayed = await evalpJson(["deliveries", "replay", test.id]);
    expect(replayed).toMatchObject({ id: test.id, status: "pending" });
    await vi.waitFor(() => expect(receiver.at("/cli")).toHaveLength(2), { timeout: 10_000, interval: 50 });
    const [first, second] = receiver.at("/cli");
    expect(second?.headers["webhook-id"]).toBe(first?.headers["webhook-id"]);

    const rotated = await evalpJson(["webhooks", "rotate", endpoint.id]);
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(endpoint.secret);

    const recovered = await evalpJson(["webhooks", "recover", endpoint.id, "--since", "1h", "--dry-run"]);
    expect(recovered).toEqual({ count: 0 });
  });

  it("reads and sets quotas at the expected revision; a stale one is the API's revision_conflict", async () => {
    const quotas = await evalpJson(["quotas", "get"]);
    expect(quotas).toMatchObject({ environment_id: ids.env, revision: 1 });
    expect(quotas.usage.webhook_endpoints).toBe(1);

    const updated = await evalpJson([
      "quotas",
      "set",
      "--limit",
      "webhook_endpoints=7",
      "--limit",
      "programs=3",
    ]);
    expect(updated.revision).toBe(2);
    expect(updated.limits).toEqual({ ...quotas.limits, webhook_endpoints: 7, programs: 3 });

    const stale = await evalp(["quotas", "set", "--limit", "programs=4", "--expected-revision", "1"], {
      env: scopeEnv(),
    });
    expect(stale).toMatchObject({ code: 1, stdout: "" });
    expect(stale.stderr).toMatch(ERROR_LINE("revision_conflict"));
    expect((await evalpJson(["quotas", "get"])).limits.programs).toBe(3);
  });

  it("creates a webhook endpoint, printing its secret once, and the endpoint receives deliveries signed with it", async () => {
    const secret = `whsec_${randomBytes(32).toString("base64")}`;
    const run = await evalp(
      [
        "webhooks",
        "create",
        "--url",
        `${receiver.url}/cli-created`,
        "--event-type",
        "subject.imported",
        "--event-type",
        "evaluation.scored,webhook.test",
        "--secret",
        secret,
      ],
      { env: scopeEnv() },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.split(secret)).toHaveLength(2);
    expect(run.stderr).toContain("shown this once");
    const id = /^id +([0-9a-f-]{36})$/m.exec(run.stdout)?.[1] ?? "";
    expect(id).not.toBe("");

    const listed = await evalpJson<{ id: string; url: string; event_types: string[] }[]>([
      "webhooks",
      "list",
    ]);
    expect(listed.find((endpoint) => endpoint.id === id)).toMatchObject({
      url: `${receiver.url}/cli-created`,
      event_types: ["subject.imported", "evaluation.scored", "webhook.test"],
    });
    expect(JSON.stringify(listed)).not.toContain(secret);

    await evalpJson(["webhooks", "test", id]);
    await vi.waitFor(() => expect(receiver.at("/cli-created")).toHaveLength(1), {
      timeout: 10_000,
      interval: 50,
    });
    const [delivery] = receiver.at("/cli-created");
    const verified = await verifyWebhook(secret, delivery?.headers ?? {}, delivery?.body ?? "");
    expect(verified).toMatchObject({ type: "webhook.test" });

    // A bad event type is the API's 422, and nothing is created (it counts in no quota).
    const refused = await evalp(
      ["webhooks", "create", "--url", `${receiver.url}/nope`, "--event-type", "no.such_event"],
      { env: scopeEnv() },
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error validation_error: /);
    const after = await evalpJson<{ url: string }[]>(["webhooks", "list"]);
    expect(after.map((endpoint) => endpoint.url)).not.toContain(`${receiver.url}/nope`);
  });

  it("keeps sessions in named profiles: login --profile, then EVALP_PROFILE, --profile or the file's default pick one", async () => {
    const profiles = { EVALP_CONFIG: join(home, "profiles.json") };
    const login = await evalp(["login", "--email", user.email, "--password-stdin", "--profile", "staging"], {
      stdin: `${user.password}\n`,
      env: profiles,
    });
    expect(login.code, login.stderr).toBe(0);
    const file = JSON.parse(await readFile(profiles.EVALP_CONFIG, "utf8"));
    expect(file.profiles.staging).toMatchObject({ url: stack.url, token: expect.any(String) });
    expect(login.stdout + login.stderr).not.toContain(file.profiles.staging.token);

    // The default profile is another, empty one: not logged in there.
    const asDefault = await evalp(["whoami"], { env: profiles });
    expect(asDefault.code).toBe(1);
    expect(asDefault.stderr).toMatch(/^error unauthenticated: not logged in/);

    const picks: Array<{ args: string[]; env: Record<string, string> }> = [
      { args: ["--profile", "staging"], env: {} },
      { args: [], env: { EVALP_PROFILE: "staging" } },
    ];
    for (const how of picks) {
      const run = await evalp(["--json", "whoami", ...how.args], { env: { ...profiles, ...how.env } });
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ kind: "session", email: user.email });
    }
    expect((await evalp(["profiles", "use", "staging"], { env: profiles })).code).toBe(0);
    const byDefault = await evalp(["--json", "apps", "list"], { env: profiles });
    expect(byDefault.code, byDefault.stderr).toBe(0);
    expect(JSON.parse(byDefault.stdout).map((app: { id: string }) => app.id)).toContain(ids.app);

    // The flat file of the other tests is still read as it was.
    expect((await evalp(["whoami"])).code).toBe(0);
  });

  it("shows a bundle's status and moves it", async () => {
    const { bundle } = await createBundle(api, tenant());
    expect(await evalpJson(["bundles", "status", bundle.id])).toMatchObject({
      id: bundle.id,
      status: "draft",
    });
    const moved = await evalpJson(["bundles", "status", bundle.id, "--set", "validated"]);
    expect(moved).toMatchObject({ id: bundle.id, status: "validated" });
    const refused = await evalp(["bundles", "status", bundle.id, "--set", "validated"], { env: scopeEnv() });
    expect(refused.stderr).toMatch(ERROR_LINE("invalid_transition"));
  });

  it("lists the audit trail, filtered", async () => {
    await vi.waitFor(
      async () => {
        const events = await evalpJson<{ action: string; resource_id: string }[]>([
          "audit",
          "list",
          "--action",
          "app.created",
        ]);
        expect(events).toEqual([expect.objectContaining({ action: "app.created", resource_id: ids.app })]);
      },
      { timeout: 10_000, interval: 200 },
    );
    const recent = await evalpJson<{ action: string }[]>(["audit", "list", "--limit", "2"]);
    expect(recent).toHaveLength(2);
    expect(recent.map((event) => event.action)).toEqual(["bundle.status_changed", "bundle.created"]);
  });

  it("lists evaluations, shows one, its result once scored, and rescores it against another bundle", async () => {
    const setup = await interviewSetup(api, tenant());
    const { evaluation, participant } = await consentedInterview(api, setup);
    for (const [question, answer] of [
      ["q1", { value: 4 }],
      ["q2", { option_id: "a" }],
      ["q3", { value: 4 }],
    ] as const) {
      expect((await participant.answer(question, answer)).status).toBe(200);
    }
    expect((await participant.finish()).status).toBe(200);

    const listed = await evalpJson<{ id: string; status: string }[]>([
      "evaluations",
      "list",
      "--status",
      "completed",
    ]);
    expect(listed.map((item) => [item.id, item.status])).toEqual([[evaluation.id, "completed"]]);
    expect(await evalpJson(["evaluations", "get", evaluation.id])).toMatchObject({ id: evaluation.id });
    const result = await vi.waitFor(() => evalpJson(["evaluations", "result", evaluation.id]), {
      timeout: 15_000,
      interval: 200,
    });
    expect(result).toMatchObject({
      evaluation_id: evaluation.id,
      bundle_id: setup.bundleId,
      outcome: "completed",
    });
    const table = await evalp(["evaluations", "result", evaluation.id], { env: scopeEnv() });
    expect(table.stdout).toMatch(/^AXIS +SCORE +BAND$/m);
    expect(table.stdout).toMatch(/^experience +40 +Senior$/m);

    const newer = await publishedBundle(api, tenant());
    const rescored = await evalpJson(["evaluations", "rescore", evaluation.id, "--bundle", newer]);
    expect(rescored).toMatchObject({ evaluation_id: evaluation.id, bundle_id: newer });
    const all = await evalpJson<{ bundle_id: string }[]>(["evaluations", "result", evaluation.id, "--all"]);
    expect(all.map((item) => item.bundle_id)).toEqual([setup.bundleId, newer]);
    const refused = await evalp(
      ["evaluations", "rescore", evaluation.id, "--bundle", (await createBundle(api, tenant())).bundle.id],
      {
        env: scopeEnv(),
      },
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(ERROR_LINE("bundle_not_published"));
  });

  it("lists, shows, exports and erases subjects", async () => {
    const externalId = `cli-${Date.now()}`;
    const subjectId = await createSubject(api, tenant(), externalId);
    expect(await evalpJson(["subjects", "list", "--external-id", externalId])).toEqual([
      expect.objectContaining({ id: subjectId, external_id: externalId }),
    ]);
    expect(await evalpJson(["subjects", "get", subjectId])).toMatchObject({ id: subjectId, profile: {} });
    const exported = await evalp(["subjects", "export", subjectId], { env: scopeEnv() });
    expect(exported.code, exported.stderr).toBe(0);
    expect(JSON.parse(exported.stdout)).toMatchObject({
      subject_id: subjectId,
      subject: { external_id: externalId },
      interview: { evaluations: [] },
      platform: { continuous_answers: [] },
      webhooks: { webhook_deliveries: [] },
    });
    expect(await evalpJson(["subjects", "erase", subjectId])).toMatchObject({
      subject_id: subjectId,
      erasure: { status: "pending" },
    });
    await vi.waitFor(
      async () =>
        expect(await evalpJson(["subjects", "erasure", subjectId])).toMatchObject({ status: "completed" }),
      { timeout: 15_000, interval: 200 },
    );
    const gone = await evalp(["subjects", "get", subjectId], { env: scopeEnv() });
    expect(gone.stderr).toMatch(ERROR_LINE("subject_erased"));
  });

  it("refuses a config file others may read, saying how to fix it", async () => {
    await chmod(configFile, 0o644);
    const run = await evalp(["whoami"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `error config_insecure: ${configFile} is open to group or others (mode 644); run: chmod 600 ${configFile}\n`,
    );
    await chmod(configFile, 0o600);
  });

  it("logs out: the token is revoked and forgotten", async () => {
    const { token } = JSON.parse(await readFile(configFile, "utf8"));
    const run = await evalp(["logout"]);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(await readFile(configFile, "utf8")).token).toBeUndefined();
    expect((await api.get("/v1/auth/principal", { token })).status).toBe(401);
    const after = await evalp(["whoami"]);
    expect(after.code).toBe(1);
    expect(after.stderr).toMatch(/^error unauthenticated: not logged in/);
  });
});

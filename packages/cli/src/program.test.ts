import { mkdtemp, readFile, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { writeConfig, writeConfigDocument } from "./config-file.js";
import { connectClient } from "./connect.js";
import type { Runtime } from "./context.js";
import { run } from "./program.js";

/** One request as the fake API saw it. */
type Seen = {
  method: string;
  origin: string;
  path: string;
  query: URLSearchParams;
  headers: Headers;
  body: any;
};
type Answer = { status?: number; body?: unknown; headers?: Record<string, string> };

let configFile: string;
beforeEach(async () => {
  configFile = join(await mkdtemp(join(tmpdir(), "evalp-cli-")), "evalp", "config.json");
});

/** Runs the CLI against a fake API that answers each request with `answer(request)`. */
async function cli(
  argv: string[],
  answer: (seen: Seen) => Answer = () => ({}),
  env: Record<string, string> = {},
) {
  const seen: Seen[] = [];
  const out: string[] = [];
  const err: string[] = [];
  const runtime: Runtime = {
    env: { EVALP_CONFIG: configFile, EVALP_URL: "http://api.test", ...env },
    streams: { stdout: (text) => out.push(text), stderr: (text) => err.push(text) },
    readStdin: async () => "s3cret password\n",
    connect: (url, credential) =>
      connectClient(url, credential, async (request) => {
        const url = new URL(request.url);
        const text = await request.text();
        const entry = {
          method: request.method,
          origin: url.origin,
          path: url.pathname,
          query: url.searchParams,
          headers: request.headers,
          body: text ? JSON.parse(text) : undefined,
        };
        seen.push(entry);
        const { status = 200, body = {}, headers = {} } = answer(entry);
        return new Response(status === 204 ? null : JSON.stringify(body), {
          status,
          headers: { "content-type": "application/json", "x-request-id": "req-fake", ...headers },
        });
      }),
  };
  const code = await run(argv, runtime);
  return { code, seen, stdout: out.join(""), stderr: err.join("") };
}

const IDS = { EVALP_TOKEN: "evs_token", EVALP_ORG: "o1", EVALP_APP: "a1", EVALP_ENV: "e1" };
const ENV_PATH = "/v1/organizations/o1/apps/a1/environments/e1";

describe("usage errors", () => {
  it.each([
    [["bogus"], "unknown command 'bogus'"],
    [["apps", "list", "--limit", "0"], "--limit"],
    [["apps", "create", "--slug", "x"], "--name"],
    [["quotas", "set", "--limit", "programs"], "name=value"],
    [["deliveries", "list", "--status", "lost"], "lost"],
    [["apps", "list", "--bogus"], "unknown option '--bogus'"],
  ])("%j exits 2 with one `error usage:` line, sending nothing", async (argv, fragment) => {
    const result = await cli(argv, undefined, IDS);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error usage: .+\n$/);
    expect(result.stderr).toContain(fragment);
    expect(result.seen).toEqual([]);
  });

  it("names the flag of a missing id and sends nothing", async () => {
    const result = await cli(["keys", "list"], undefined, { EVALP_TOKEN: "t", EVALP_ORG: "o1" });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--app");
    expect(result.seen).toEqual([]);
  });

  it("asks to log in when there is no credential", async () => {
    const result = await cli(["apps", "list", "--org", "o1"]);
    expect(result).toMatchObject({ code: 1, seen: [] });
    expect(result.stderr).toMatch(/^error unauthenticated: .*evalp login/);
  });

  it("shows help with exit 0", async () => {
    const result = await cli(["quotas", "set", "--help"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("--expected-revision");
  });
});

describe("requests", () => {
  it("takes ids from flags before the environment, and global flags after the command", async () => {
    const result = await cli(
      ["apps", "get", "--org", "o2"],
      () => ({ body: { id: "a1", slug: "s", name: "n" } }),
      IDS,
    );
    expect(result.code).toBe(0);
    expect(result.seen[0]).toMatchObject({ method: "GET", path: "/v1/organizations/o2/apps/a1" });
    expect(result.seen[0]?.headers.get("authorization")).toBe("Bearer evs_token");
    expect(result.stdout).toMatch(/^id +a1$/m);
  });

  it("sends an API key as X-API-Key, never as a bearer token", async () => {
    const result = await cli(
      ["whoami"],
      () => ({ body: { kind: "api_key", principal_id: "k", scopes: [] } }),
      {
        EVALP_API_KEY: "evk_k",
      },
    );
    expect(result.code).toBe(0);
    expect(result.seen[0]?.headers.get("x-api-key")).toBe("evk_k");
    expect(result.seen[0]?.headers.get("authorization")).toBeNull();
    expect(result.stdout).toMatch(/^credential +EVALP_API_KEY$/m);
  });

  it("follows next_cursor to the end, and stops at --limit", async () => {
    const pages = (seen: Seen): Answer =>
      seen.query.get("cursor") === "c2"
        ? { body: { items: [{ id: "3" }], next_cursor: null } }
        : { body: { items: [{ id: "1" }, { id: "2" }], next_cursor: "c2" } };
    const all = await cli(["--json", "apps", "list"], pages, IDS);
    expect(JSON.parse(all.stdout).map((app: { id: string }) => app.id)).toEqual(["1", "2", "3"]);
    expect(all.seen).toHaveLength(2);
    const some = await cli(["apps", "list", "--limit", "2", "--json"], pages, IDS);
    expect(JSON.parse(some.stdout)).toHaveLength(2);
    expect(some.seen).toHaveLength(1);
    expect(some.seen[0]?.query.get("limit")).toBe("2");
  });

  it("creates a key with its scopes and prints the secret once, with a note on stderr", async () => {
    const created = {
      id: "k1",
      name: "ci",
      key_prefix: "evk_abc",
      scopes: ["org:read"],
      secret: "evk_abc_s",
    };
    const result = await cli(
      ["keys", "create", "--name", "ci", "--scope", "org:read,webhooks:read", "--scope", "audit:read"],
      () => ({ status: 201, body: created }),
      IDS,
    );
    expect(result.seen[0]).toMatchObject({
      method: "POST",
      path: `${ENV_PATH}/api-keys`,
      body: { name: "ci", scopes: ["org:read", "webhooks:read", "audit:read"] },
    });
    expect(result.seen[0]?.headers.get("idempotency-key")).toBeTruthy();
    expect(result.stdout.match(/evk_abc_s/g)).toHaveLength(1);
    expect(result.stderr).toContain("shown this once");
  });

  it("sets quotas from the current ones: named limits changed, others kept, at the current revision", async () => {
    const limits = { programs: 100, webhook_endpoints: 20, evaluations: 10000 };
    const quotas = { environment_id: "e1", limits, usage: { programs: 1 }, revision: 4, schema_version: 1 };
    const result = await cli(
      ["quotas", "set", "--limit", "programs=5", "--limit", "webhook_endpoints=0"],
      (seen) => ({ body: seen.method === "GET" ? quotas : { ...quotas, revision: 5 } }),
      IDS,
    );
    expect(result.code).toBe(0);
    expect(result.seen[1]).toMatchObject({
      method: "PATCH",
      path: `${ENV_PATH}/quotas`,
      body: { expected_revision: 4, limits: { programs: 5, webhook_endpoints: 0, evaluations: 10000 } },
    });
    expect(result.stdout).toMatch(/^revision +5$/m);
    expect(result.stdout).toMatch(/^programs +100 +1$/m);
  });

  it("sends --expected-revision as given, and refuses an unknown quota before changing anything", async () => {
    const quotas = {
      environment_id: "e1",
      limits: { programs: 100 },
      usage: {},
      revision: 4,
      schema_version: 1,
    };
    const given = await cli(
      ["quotas", "set", "--limit", "programs=5", "--expected-revision", "3"],
      () => ({ body: quotas }),
      IDS,
    );
    expect(given.seen[1]?.body.expected_revision).toBe(3);
    const unknown = await cli(["quotas", "set", "--limit", "progams=5"], () => ({ body: quotas }), IDS);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown quota progams");
    expect(unknown.seen.map((seen) => seen.method)).toEqual(["GET"]);
  });

  it("filters deliveries and audit events by the query the API takes", async () => {
    const empty = () => ({ body: { items: [], next_cursor: null } });
    const deliveries = await cli(
      ["deliveries", "list", "--status", "failed", "--endpoint", "w1"],
      empty,
      IDS,
    );
    expect(Object.fromEntries(deliveries.seen[0]!.query)).toEqual({
      limit: "100",
      status: "failed",
      endpoint_id: "w1",
    });
    expect(deliveries.stdout).toBe(
      "ID  EVENT_TYPE  STATUS  ATTEMPT_COUNT  RESPONSE_STATUS  LAST_ERROR  CREATED_AT\n",
    );
    const audit = await cli(
      ["audit", "list", "--action", "app.created", "--resource-type", "app"],
      empty,
      IDS,
    );
    expect(audit.seen[0]?.path).toBe("/v1/organizations/o1/audit-events");
    expect(Object.fromEntries(audit.seen[0]!.query)).toEqual({
      limit: "100",
      action: "app.created",
      resource_type: "app",
    });
  });

  it("filters evaluations by the query the API takes, and rescores with an Idempotency-Key", async () => {
    const listed = await cli(
      ["evaluations", "list", "--status", "completed", "--subject", "s1", "--since", "7d", "--limit", "5"],
      () => ({ body: { items: [], next_cursor: null } }),
      IDS,
    );
    expect(listed.seen[0]?.path).toBe(`${ENV_PATH}/evaluations`);
    const query = Object.fromEntries(listed.seen[0]!.query);
    expect(query).toEqual({
      limit: "5",
      status: "completed",
      subject_id: "s1",
      created_after: expect.any(String),
    });
    expect(Date.now() - Date.parse(query.created_after ?? "")).toBeGreaterThanOrEqual(7 * 86_400_000);
    expect(listed.stdout).toBe("ID  SUBJECT_ID  BUNDLE_ID  STATUS  CREATED_AT  SCORED_AT\n");

    const result = {
      evaluation_id: "ev1",
      subject_id: "s1",
      bundle_id: "b2",
      fingerprint: "sha256:f",
      outcome: "completed",
      scored_at: "2026-11-25T10:00:00.000Z",
      report: {
        axes: [
          { axis: "experience", label: "Experience", score: 40, band_id: "senior", band_label: "Senior" },
        ],
      },
      trace: {},
    };
    const rescored = await cli(
      ["evaluations", "rescore", "ev1", "--bundle", "b2"],
      () => ({ status: 201, body: result }),
      IDS,
    );
    expect(rescored.seen[0]).toMatchObject({
      method: "POST",
      path: `${ENV_PATH}/evaluations/ev1/rescore`,
      body: { bundle_id: "b2" },
    });
    expect(rescored.seen[0]?.headers.get("idempotency-key")).toMatch(/^[0-9a-f-]{36}$/);
    expect(rescored.stdout).toMatch(/^outcome +completed$/m);
    expect(rescored.stdout).toMatch(/^experience +40 +Senior$/m);
    const missing = await cli(["evaluations", "rescore", "ev1"], () => ({}), IDS);
    expect(missing.code).toBe(2);
    expect(missing.seen).toEqual([]);
  });

  it("recovers since a span back from now", async () => {
    const result = await cli(
      ["webhooks", "recover", "w1", "--since", "2h", "--dry-run"],
      () => ({ body: { count: 3 } }),
      IDS,
    );
    expect(result.seen[0]).toMatchObject({
      path: `${ENV_PATH}/webhooks/w1/recover`,
      body: { dry_run: true },
    });
    expect(Date.now() - Date.parse(result.seen[0]?.body.since)).toBeGreaterThanOrEqual(2 * 3_600_000);
    expect(result.stdout).toMatch(/^count +3$/m);
  });
});

describe("API errors", () => {
  it("print `error <code>: <message> (request <id>)` and exit 1", async () => {
    const result = await cli(
      ["apps", "get"],
      () => ({
        status: 404,
        body: {
          detail: { code: "not_found", message: "App not found.", context: {}, request_id: "req-404" },
        },
      }),
      IDS,
    );
    expect(result).toMatchObject({ code: 1, stdout: "" });
    expect(result.stderr).toBe("error not_found: App not found. (request req-404)\n");
  });

  it("print a validation error's problems on the one line", async () => {
    const detail = [
      { loc: ["body", "slug"], msg: "String should match pattern", type: "string_pattern_mismatch" },
    ];
    const result = await cli(
      ["apps", "create", "--slug", "Bad Slug", "--name", "n"],
      () => ({ status: 422, body: { detail } }),
      IDS,
    );
    expect(result.stderr).toBe(
      "error validation_error: body.slug: String should match pattern (request req-fake)\n",
    );
  });
});

describe("login and logout", () => {
  it("stores the token 0600 with the session's organization, and never prints it", async () => {
    const result = await cli(["login", "--email", "a@example.com", "--password-stdin"], (seen) =>
      seen.path === "/auth/login"
        ? { body: { access_token: "evs_new", token_type: "bearer", expires_at: "2026-11-26T00:00:00.000Z" } }
        : { body: { organization_id: "o9" } },
    );
    expect(result.code).toBe(0);
    expect(result.seen[0]).toMatchObject({ body: { email: "a@example.com", password: "s3cret password" } });
    expect(result.seen[0]?.headers.get("authorization")).toBeNull();
    expect(result.seen[1]?.headers.get("authorization")).toBe("Bearer evs_new");
    expect(JSON.parse(await readFile(configFile, "utf8"))).toEqual({
      url: "http://api.test",
      token: "evs_new",
      token_expires_at: "2026-11-26T00:00:00.000Z",
      org: "o9",
    });
    expect((await stat(configFile)).mode & 0o777).toBe(0o600);
    expect(result.stdout + result.stderr).not.toContain("evs_new");
  });

  it("without --password-stdin and no terminal, refuses as a usage error", async () => {
    const result = await cli(["login", "--email", "a@example.com"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--password-stdin");
  });

  it("revokes the stored token and forgets it, even one the API no longer knows", async () => {
    await writeConfig(configFile, { url: "http://api.test", token: "evs_old", org: "o1" });
    const result = await cli(["logout"], () => ({
      status: 401,
      body: { detail: { code: "unauthenticated", message: "No.", context: {}, request_id: "r" } },
    }));
    expect(result.code).toBe(0);
    expect(result.seen[0]).toMatchObject({ method: "POST", path: "/auth/logout" });
    expect(result.seen[0]?.headers.get("authorization")).toBe("Bearer evs_old");
    expect(JSON.parse(await readFile(configFile, "utf8"))).toEqual({ url: "http://api.test", org: "o1" });
  });
});

describe("webhooks create", () => {
  it("sends the URL, every event type and the secret given, and prints the secret once with a note", async () => {
    const created = {
      id: "w1",
      environment_id: "e1",
      url: "https://hooks.example.com/evalp",
      enabled: true,
      event_types: ["subject.imported", "evaluation.scored", "interview.completed"],
      created_at: "2026-11-25T10:00:00.000Z",
      secret: "whsec_c2VjcmV0",
    };
    const result = await cli(
      [
        "webhooks",
        "create",
        "--url",
        created.url,
        "--event-type",
        "subject.imported",
        "--event-type",
        "evaluation.scored,interview.completed",
        "--secret",
        "whsec_c2VjcmV0",
      ],
      () => ({ status: 201, body: created }),
      IDS,
    );
    expect(result.code).toBe(0);
    expect(result.seen[0]).toMatchObject({
      method: "POST",
      path: `${ENV_PATH}/webhooks`,
      body: {
        url: created.url,
        event_types: ["subject.imported", "evaluation.scored", "interview.completed"],
        secret: "whsec_c2VjcmV0",
      },
    });
    expect(result.seen[0]?.headers.get("idempotency-key")).toBeTruthy();
    expect(result.stdout.match(/whsec_c2VjcmV0/g)).toHaveLength(1);
    expect(result.stderr).toContain("shown this once");
  });

  it("requires --url and --event-type, and sends nothing without them", async () => {
    const result = await cli(["webhooks", "create", "--url", "https://hooks.example.com"], () => ({}), IDS);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--event-type");
    expect(result.seen).toEqual([]);
    const noUrl = await cli(["webhooks", "create", "--event-type", "*"], () => ({}), IDS);
    expect(noUrl.code).toBe(2);
    expect(noUrl.seen).toEqual([]);
  });

  it("takes a --url before the command as the API's address, after it as the endpoint's", async () => {
    const result = await cli(
      [
        "--url",
        "http://other-api.test",
        "webhooks",
        "create",
        "--url=https://hooks.example.com",
        "--event-type",
        "*",
      ],
      () => ({ status: 201, body: { id: "w1", secret: "whsec_x" } }),
      IDS,
    );
    expect(result.code).toBe(0);
    expect(result.seen[0]?.origin).toBe("http://other-api.test");
    expect(result.seen[0]?.body).toMatchObject({ url: "https://hooks.example.com", event_types: ["*"] });
  });
});

describe("version and completion", () => {
  it("prints the package's version", async () => {
    const { version } = JSON.parse(await readFile(new URL("../package.json", import.meta.url), "utf8"));
    const result = await cli(["--version"]);
    expect(result).toMatchObject({ code: 0, stdout: `${version}\n` });
  });

  it("prints a completion script for bash, zsh and fish, and refuses another shell", async () => {
    for (const shell of ["bash", "zsh", "fish"]) {
      const result = await cli(["completion", shell]);
      expect(result.code, shell).toBe(0);
      expect(result.stdout, shell).toContain("webhooks create");
    }
    const other = await cli(["completion", "powershell"]);
    expect(other.code).toBe(2);
  });
});

describe("profiles", () => {
  const profiles = {
    default_profile: "staging",
    profiles: {
      prod: { url: "http://prod.test", api_key: "evk_prod", org: "o-prod" },
      staging: { url: "http://staging.test", token: "evs_staging", org: "o-staging" },
    },
  };

  it("uses the file's default profile, another by --profile or EVALP_PROFILE, the flag first", async () => {
    await writeConfigDocument(configFile, { ...profiles, flat: false });
    const answer = () => ({ body: { items: [], next_cursor: null } });
    const noUrl = { EVALP_URL: "" };
    const byDefault = await cli(["apps", "list"], answer, noUrl);
    expect(byDefault.seen[0]?.path).toBe("/v1/organizations/o-staging/apps");
    expect(byDefault.seen[0]?.headers.get("authorization")).toBe("Bearer evs_staging");

    const byEnv = await cli(["apps", "list"], answer, { ...noUrl, EVALP_PROFILE: "prod" });
    expect(byEnv.seen[0]?.path).toBe("/v1/organizations/o-prod/apps");
    expect(byEnv.seen[0]?.headers.get("x-api-key")).toBe("evk_prod");

    const byFlag = await cli(["apps", "list", "--profile", "staging"], answer, {
      ...noUrl,
      EVALP_PROFILE: "prod",
    });
    expect(byFlag.seen[0]?.path).toBe("/v1/organizations/o-staging/apps");
  });

  it("logs in into the named profile and leaves the others alone", async () => {
    await writeConfigDocument(configFile, { ...profiles, flat: false });
    const result = await cli(
      ["login", "--email", "ada@example.com", "--password-stdin", "--profile", "dev"],
      (seen) =>
        seen.path === "/auth/login"
          ? {
              body: { access_token: "evs_dev", token_type: "bearer", expires_at: "2026-11-26T00:00:00.000Z" },
            }
          : { body: { organization_id: "o-dev" } },
    );
    expect(result.code).toBe(0);
    const file = JSON.parse(await readFile(configFile, "utf8"));
    expect(file.default_profile).toBe("staging");
    expect(file.profiles.prod).toEqual(profiles.profiles.prod);
    expect(file.profiles.dev).toMatchObject({ token: "evs_dev", url: "http://api.test" });
  });

  it("lists the profiles without their credentials, and changes the default", async () => {
    await writeConfigDocument(configFile, { ...profiles, flat: false });
    const listed = await cli(["profiles", "list"]);
    expect(listed.stdout).toContain("prod");
    expect(listed.stdout).not.toContain("evk_prod");
    expect(listed.stdout).not.toContain("evs_staging");
    expect((await cli(["profiles", "use", "prod"])).code).toBe(0);
    expect(JSON.parse(await readFile(configFile, "utf8")).default_profile).toBe("prod");
    const unknown = await cli(["profiles", "use", "nope"]);
    expect(unknown.code).toBe(2);
  });
});

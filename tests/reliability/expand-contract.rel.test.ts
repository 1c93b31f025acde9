// Expand/contract: the release before the newest migration keeps working on the schema that
// migration made, as it must while a rollout runs old and new pods side by side
// (deploy/k8s/README.md#migrations). Its code is this repository's commit before the newest
// migration, extracted and built here; it runs as the five processes `npm start` runs, against
// a database migrated by this checkout.
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, apiClient } from "../api/support/client.js";
import { createKey, createTenant, ik, type Tenant } from "../api/support/fixtures.js";
import { type PlatformProcesses, startProcesses } from "../api/support/processes.js";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SERVICES = ["control", "platform", "interview", "webhooks", "gateway"];

let previous = "";
let dir = "";
let platform: PlatformProcesses | undefined;
let api: ApiClient;
let tenant: Tenant;

/**
 * The previous release's dependencies are this checkout's (the same lockfile's packages, which
 * a release's code runs on unchanged), but its own workspace packages: `@evalp/*` link into its tree.
 */
function linkDependencies(into: string): void {
  const modules = join(ROOT, "node_modules");
  mkdirSync(join(into, "node_modules", "@evalp"), { recursive: true });
  for (const entry of readdirSync(modules)) {
    if (entry !== "@evalp") symlinkSync(join(modules, entry), join(into, "node_modules", entry));
  }
  for (const name of readdirSync(join(modules, "@evalp"))) {
    symlinkSync(readlinkSync(join(modules, "@evalp", name)), join(into, "node_modules", "@evalp", name));
  }
}

beforeAll(async () => {
  const git = async (...args: string[]) => (await run("git", args, { cwd: ROOT })).stdout.trim();
  const newest = await git("log", "-1", "--format=%H", "--", "services/*/migrations/*.sql");
  previous = await git("rev-parse", `${newest}^`);
  dir = mkdtempSync(join(tmpdir(), "evalp-previous-"));
  await run("sh", ["-c", `git archive ${previous} | tar -x -C "${dir}"`], { cwd: ROOT });
  linkDependencies(dir);
  await run(
    "npx",
    [
      "turbo",
      "run",
      "build",
      ...SERVICES.map((name) => `--filter=@evalp/${name}`),
      "--output-logs=errors-only",
    ],
    { cwd: dir, maxBuffer: 64 * 1024 * 1024 },
  );
  // This checkout's migrations (startProcesses clones the database migrated with them), the
  // previous release's processes.
  platform = await startProcesses({ root: dir, startTimeoutMs: 120_000 });
  api = apiClient(platform.url);
  tenant = await createTenant(api);
}, 1_200_000);

afterAll(async () => {
  await platform?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the previous release on the newest schema", () => {
  it("signs up, issues a key, writes and reads subjects (an idempotent write replayed), lists them", async () => {
    expect(previous).toMatch(/^[0-9a-f]{40}$/);
    const key = (await createKey(api, tenant, ["subjects:write", "subjects:read", "org:read"])).secret;
    const body = {
      items: [{ external_id: "expand-contract-1", identity_mode: "anonymous", profile: { n: 1 } }],
    };
    const idempotencyKey = ik();
    const written = await api.post(`${tenant.env}/subjects/batch`, body, { apiKey: key, idempotencyKey });
    expect([200, 201], written.text).toContain(written.status);
    const subjectId: string = written.body.receipts[0].subject_id;
    const replayed = await api.post(`${tenant.env}/subjects/batch`, body, { apiKey: key, idempotencyKey });
    expect(replayed.body.batch_id).toBe(written.body.batch_id);
    const read = await api.get(`${tenant.env}/subjects/${subjectId}`, { apiKey: key });
    expect(read.status, read.text).toBe(200);
    expect(read.body.external_id).toBe("expand-contract-1");
    const listed = await api.get(`${tenant.env}/subjects`, { apiKey: key });
    expect(listed.status, listed.text).toBe(200);
    expect(JSON.stringify(listed.body)).toContain(subjectId);
    const app = await api.get(tenant.app, { apiKey: key });
    expect(app.status, app.text).toBe(200);
  });
});

import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { createKey, createTenant } from "./support/fixtures.js";
import { publishedBundle } from "./support/interview.js";
import { useStack } from "./support/stack.js";

// The Python package (sdks/python) is tested with Debian's python3 and its pytest against this
// platform: this test prepares a tenant, keys and a published bundle, then runs the pytest suite
// with them in EVALP_* variables. Its unit tests (retries, paging, webhooks) run in the same run.
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PYTHON = "/usr/bin/python3";
const context = useStack();

describe("the Python package", () => {
  it("passes its pytest suite against the platform", async () => {
    const { api, stack } = context;
    const tenant = await createTenant(api);
    const [backend, agent, bundleId] = await Promise.all([
      createKey(api, tenant, [
        "org:read",
        "subjects:write",
        "evaluations:read",
        "evaluations:write",
        "webhooks:read",
        "webhooks:write",
      ]),
      createKey(api, tenant, ["interviews:agent"], "agent"),
      publishedBundle(api, tenant),
    ]);
    // Not spawnSync: the platform answering the Python tests runs in this process.
    const run: { code?: number; stdout: string; stderr: string } = await promisify(execFile)(
      PYTHON,
      ["-m", "pytest", "sdks/python/tests", "-q", "-p", "no:cacheprovider", "-rfEs"],
      {
        cwd: ROOT,
        encoding: "utf8",
        timeout: 150_000,
        maxBuffer: 16 * 1024 * 1024,
        env: {
          ...process.env,
          PYTHONDONTWRITEBYTECODE: "1",
          EVALP_URL: stack.url,
          EVALP_API_KEY: backend.secret,
          EVALP_AGENT_KEY: agent.secret,
          EVALP_ORG: tenant.organizationId,
          EVALP_APP: tenant.appId,
          EVALP_ENV: tenant.environmentId,
          EVALP_BUNDLE_ID: bundleId,
        },
      },
    ).catch((failed: { code?: number; stdout: string; stderr: string }) => failed);
    expect(run.code, `pytest failed:\n${run.stdout}\n${run.stderr}`).toBeUndefined();
    // Every test ran: none skipped, none deselected.
    expect(run.stdout).toMatch(/\d+ passed/);
    expect(run.stdout).not.toMatch(/skipped|deselected|xfail/);
  }, 180_000);
});

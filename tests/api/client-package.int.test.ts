import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { createKey, createTenant } from "./support/fixtures.js";
import { useStack } from "./support/stack.js";

// What an integrator installs is the tarball `npm pack` makes, not this repository: the client is
// packed, installed into an empty project from that tarball alone (its dependencies from the
// registry), and its README's quickstart runs there against the platform, as pasted.
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const run = promisify(execFile);
const context = useStack();
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The project's npm, on the Node.js this test runs on. */
function npm(args: string[], cwd: string) {
  const env = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH}` };
  return run("npm", [...args, "--no-audit", "--no-fund", "--loglevel=error"], { cwd, env, timeout: 180_000 });
}

/** The README's block marked `js quickstart`. */
function quickstart(): string {
  const readme = readFileSync(join(ROOT, "packages/client/README.md"), "utf8");
  const block = /```js quickstart\n([\s\S]*?)```/.exec(readme)?.[1];
  expect(block, "the README has a quickstart block").toBeDefined();
  return block as string;
}

describe("@evalp/client as published", () => {
  it("packs the built code, types, README and license, and its quickstart runs from the installed tarball", async () => {
    const out = mkdtempSync(join(tmpdir(), "evalp-pack-"));
    dirs.push(out);
    // Packing builds it (prepack), as publishing does.
    const packed = await npm(
      ["pack", "--workspace", "@evalp/client", "--json", "--pack-destination", out],
      ROOT,
    );
    const [tarball] = JSON.parse(packed.stdout) as Array<{
      filename: string;
      files: Array<{ path: string }>;
    }>;
    const files = (tarball?.files ?? []).map((file) => file.path);
    expect(files).toEqual(
      expect.arrayContaining(["package.json", "README.md", "LICENSE", "dist/index.js", "dist/index.d.ts"]),
    );
    expect(files.filter((path) => /\.test\./.test(path))).toEqual([]);

    const project = mkdtempSync(join(tmpdir(), "evalp-install-"));
    dirs.push(project);
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify({ name: "integrator", private: true, type: "module" }),
    );
    await npm(["install", "--prefer-offline", join(out, tarball?.filename ?? "")], project);
    writeFileSync(join(project, "quickstart.mjs"), quickstart());

    const { api } = context;
    const tenant = await createTenant(api);
    const key = await createKey(api, tenant, ["subjects:write", "org:read"]);
    const result = await run(process.execPath, ["quickstart.mjs"], {
      cwd: project,
      timeout: 60_000,
      env: {
        ...process.env,
        EVALP_URL: context.stack.url,
        EVALP_API_KEY: key.secret,
        EVALP_ORG: tenant.organizationId,
        EVALP_APP: tenant.appId,
        EVALP_ENV: tenant.environmentId,
      },
    });
    const lines = result.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^imported [0-9a-f-]{36} [0-9a-f-]{36}$/);
    const programId = /^program ([0-9a-f-]{36})$/.exec(lines[1] ?? "")?.[1];
    expect(programId).toBeDefined();
    expect(lines).toContain(`listed ${programId} Onboarding`);
    expect(lines.at(-1)).toMatch(/^refused 422 \S+ \S+$/);

    // What it did is there, read through the API.
    const subjects = await api.post(
      `${tenant.env}/subjects/batch`,
      {
        items: [
          { external_id: "candidate-1", identity_mode: "enterprise_managed", profile: { team: "north" } },
        ],
      },
      { apiKey: key.secret, idempotencyKey: crypto.randomUUID() },
    );
    expect(subjects.body.receipts[0].subject_id).toBe(lines[0]?.split(" ")[1]);
  }, 300_000);
});

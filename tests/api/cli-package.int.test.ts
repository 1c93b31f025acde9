import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { createKey, createTenant } from "./support/fixtures.js";
import { useStack } from "./support/stack.js";

// What an operator installs is the tarballs `npm pack` makes, not this repository: the CLI and the
// client it runs on are packed, installed together into an empty project from those tarballs alone
// (their other dependencies from the registry), and the installed `evalp` runs against the platform.
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const run = promisify(execFile);
const context = useStack();
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The project's Node.js first on PATH, as `npm` and `npx` run it. */
const PATH = `${dirname(process.execPath)}:${process.env.PATH}`;

function npm(args: string[], cwd: string) {
  return run("npm", [...args, "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd,
    env: { ...process.env, PATH },
    timeout: 180_000,
  });
}

type Packed = { filename: string; files: Array<{ path: string }> };

/** Packs a workspace (building it, as publishing does) into `out`. */
async function pack(workspace: string, out: string): Promise<Packed> {
  const packed = await npm(["pack", "--workspace", workspace, "--json", "--pack-destination", out], ROOT);
  const [tarball] = JSON.parse(packed.stdout) as Packed[];
  expect(tarball, workspace).toBeDefined();
  return tarball as Packed;
}

describe("@evalp/cli as published", () => {
  it("packs its program, README and license, and the installed `evalp` runs against the platform", async () => {
    const out = mkdtempSync(join(tmpdir(), "evalp-cli-pack-"));
    dirs.push(out);
    const client = await pack("@evalp/client", out);
    const cli = await pack("@evalp/cli", out);
    const files = cli.files.map((file) => file.path);
    expect(files).toEqual(
      expect.arrayContaining(["package.json", "README.md", "LICENSE", "bin/evalp.mjs", "dist/main.js"]),
    );
    expect(files.filter((path) => /\.test\.|^src\//.test(path))).toEqual([]);

    const project = mkdtempSync(join(tmpdir(), "evalp-cli-install-"));
    dirs.push(project);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "operator", private: true }));
    await npm(["install", "--prefer-offline", join(out, client.filename), join(out, cli.filename)], project);

    // The client the CLI runs on is the packed one (no other copy came from the registry).
    const lock = JSON.parse(readFileSync(join(project, "package-lock.json"), "utf8")) as {
      packages: Record<string, { resolved?: string }>;
    };
    const clients = Object.entries(lock.packages).filter(([path]) =>
      path.endsWith("node_modules/@evalp/client"),
    );
    expect(clients.map(([path, entry]) => [path, entry.resolved])).toEqual([
      ["node_modules/@evalp/client", expect.stringMatching(/^file:/)],
    ]);
    const manifest = JSON.parse(readFileSync(join(ROOT, "packages/cli/package.json"), "utf8")) as {
      version: string;
    };

    const env = { PATH, HOME: project, EVALP_CONFIG: join(project, "evalp.json") };
    const version = await run("npx", ["--no-install", "evalp", "--version"], { cwd: project, env });
    expect(version.stdout).toBe(`${manifest.version}\n`);

    const { api } = context;
    const tenant = await createTenant(api);
    const key = await createKey(api, tenant, ["org:read"]);
    const listed = await run("npx", ["--no-install", "evalp", "--json", "apps", "list"], {
      cwd: project,
      timeout: 60_000,
      env: {
        ...env,
        EVALP_URL: context.stack.url,
        EVALP_API_KEY: key.secret,
        EVALP_ORG: tenant.organizationId,
      },
    });
    expect((JSON.parse(listed.stdout) as Array<{ id: string }>).map((app) => app.id)).toEqual([tenant.appId]);

    const whoami = await run("npx", ["--no-install", "evalp", "--json", "whoami"], {
      cwd: project,
      timeout: 60_000,
      env: { ...env, EVALP_URL: context.stack.url, EVALP_API_KEY: key.secret },
    });
    expect(JSON.parse(whoami.stdout)).toMatchObject({ kind: "api_key" });
    expect(whoami.stdout + whoami.stderr).not.toContain(key.secret);
  }, 300_000);
});

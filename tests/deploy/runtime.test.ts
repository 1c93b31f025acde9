// The Node.js the platform runs on is named in several places — .node-version (what
// scripts/use-node.sh fetches, and nvm/fnm/volta read), .nvmrc, package.json's engines, the
// Dockerfile's base image, @types/node — and they must name one line, the one the tests run on.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

const version = read(".node-version").trim();
const major = version.split(".")[0];
const rootPackage = JSON.parse(read("package.json")) as {
  engines: { node: string };
  packageManager: string;
  devDependencies: Record<string, string>;
};
const useNode = read("scripts/use-node.sh");
const pinned = (name: string) => new RegExp(`^${name}=(\\S+)$`, "m").exec(useNode)?.[1];

/** "a.b.c" as numbers, for comparing versions. */
const parts = (v: string) => v.replace(/^v/, "").split(".").map(Number);
const atLeast = (v: string, min: string) => {
  const [a, b] = [parts(v), parts(min)];
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  return true;
};

describe("the Node.js line", () => {
  it("is one version everywhere it is named", () => {
    expect(version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(read(".nvmrc").trim()).toBe(version);
    expect(pinned("EVALP_NODE_VERSION_PINNED")).toBe(version);
    expect(rootPackage.engines.node).toBe(`^${version}`);
    expect(read("Dockerfile")).toMatch(
      new RegExp(`^ARG NODE_IMAGE=node:${version.replaceAll(".", "\\.")}-\\w+-slim$`, "m"),
    );
    expect(rootPackage.devDependencies["@types/node"]).toMatch(new RegExp(`^\\^${major}\\.`));
    expect(rootPackage.packageManager).toBe(`npm@${pinned("EVALP_NPM_VERSION")}`);
  });

  it("is the one these tests and the processes they start run on", () => {
    expect(process.version.slice(1).split(".")[0]).toBe(major);
    expect(atLeast(process.version, version), `${process.version} ≥ ${version}`).toBe(true);
  });
});

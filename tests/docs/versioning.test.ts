import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

// The API document's version is the gateway package's (services/gateway/src/plugins/openapi.ts),
// and the changelog's newest release names it: a release is not cut without its changelog entry.
const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");

describe("the API's version", () => {
  const version: string = JSON.parse(read("services/gateway/package.json")).version;

  it("is a /v1 release: 1.<minor>.<patch>", () => {
    expect(version).toMatch(/^1\.\d+\.\d+$/);
  });

  it("is the newest release of CHANGELOG.md, whose releases descend", () => {
    const releases = [...read("CHANGELOG.md").matchAll(/^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$/gm)].map(
      (match) => match[1] as string,
    );
    expect(releases[0]).toBe(version);
    const numeric = releases.map((release) => release.split(".").map(Number));
    const sorted = [...numeric].sort((a, b) => b[0]! - a[0]! || b[1]! - a[1]! || b[2]! - a[2]!);
    expect(numeric).toEqual(sorted);
  });
});

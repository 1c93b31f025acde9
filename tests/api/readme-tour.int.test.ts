import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { useStack } from "./support/stack.js";

// The tour the README links (docs/tour.md) is what a new user pastes first: its shell blocks,
// exactly as they stand there, run here in one bash (with curl and jq) against the platform.
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const context = useStack();

/** The `sh` blocks of the tour, in order. */
function tourBlocks(): string[] {
  const tour = readFileSync(`${ROOT}/docs/tour.md`, "utf8");
  expect(readFileSync(`${ROOT}/README.md`, "utf8"), "the README links the tour").toContain("(docs/tour.md)");
  return [...tour.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] as string);
}

describe("the tour the README links", () => {
  it("runs as pasted: sign-up to a completed interview and its verdict, ids and tokens picked with jq", async () => {
    const blocks = tourBlocks();
    expect(blocks.length).toBeGreaterThanOrEqual(4);
    // Not spawnSync: the platform answering the tour runs in this process.
    const run: { code?: number; stdout: string; stderr: string } = await promisify(execFile)(
      "bash",
      ["-euo", "pipefail", "-c", blocks.join("\n")],
      {
        cwd: ROOT,
        encoding: "utf8",
        timeout: 60_000,
        env: {
          ...process.env,
          // The project's node first: the tour makes its Idempotency-Keys with it.
          PATH: `${dirname(process.execPath)}:${process.env.PATH}`,
          API: context.stack.url,
          MAIL_DIR: context.stack.config.MAIL_DIR,
        },
      },
    ).catch((failed: { code?: number; stdout: string; stderr: string }) => failed);
    expect(run.code, `the tour failed:\n${run.stderr}\n${run.stdout}`).toBeUndefined();
    expect(run.stderr).toBe("");
    const lines = run.stdout.split("\n");
    // The bundle went validated → published, and the interview ran to its end.
    expect(lines).toEqual(expect.arrayContaining(["validated", "published", "completed", "true"]));
    // It ends with the verdict: the scored result, and the evaluation listed with its `scored_at`.
    const verdict = lines.find((line) => line.startsWith('{"outcome":'));
    expect(JSON.parse(verdict ?? "null")).toMatchObject({ outcome: "completed", axes: expect.any(Array) });
    expect(JSON.parse(verdict ?? "null").axes.length).toBeGreaterThan(0);
    const listed = JSON.parse(lines.at(-2) ?? "null");
    expect(listed).toEqual([{ id: expect.any(String), scored_at: expect.stringMatching(/Z$/) }]);
  }, 90_000);
});

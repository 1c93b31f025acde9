import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createKey, createTenant, ik } from "./support/fixtures.js";
import { participantClient, publishedBundle } from "./support/interview.js";
import { useStack } from "./support/stack.js";
import { createEndpoint, importSubjects } from "./support/webhooks.js";

// The examples run as an integrator runs them (`node examples/…`), against a real platform.
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const context = useStack();
const run = promisify(execFile);

/** A long-running example: its stdout as parsed JSON lines, as they come. */
type Running = { child: ChildProcess; lines: Record<string, any>[]; stderr: string[] };
const running: Running[] = [];
afterEach(() => {
  for (const { child } of running.splice(0)) child.kill("SIGTERM");
});

function start(script: string, env: Record<string, string>): Running {
  const child = spawn(process.execPath, [join(ROOT, script)], { env: { ...process.env, ...env } });
  const started: Running = { child, lines: [], stderr: [] };
  createInterface({ input: child.stdout! }).on("line", (line) => started.lines.push(JSON.parse(line)));
  createInterface({ input: child.stderr! }).on("line", (line) => started.stderr.push(line));
  running.push(started);
  return started;
}

const waitFor = <T>(check: () => T) => vi.waitFor(check, { timeout: 15_000, interval: 50 });

describe("examples/webhook-receiver", () => {
  it("prints each verified event once, flags a redelivery as a duplicate, and answers a bad signature 400", async () => {
    const { api } = context;
    const tenant = await createTenant(api);
    const secret = `whsec_${randomBytes(32).toString("base64")}`;
    const receiver = start("examples/webhook-receiver/receiver.mjs", { WEBHOOK_SECRET: secret, PORT: "0" });
    const url = await waitFor(() => {
      expect(receiver.lines[0]?.listening).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      return receiver.lines[0]?.listening as string;
    });
    const endpoint = await createEndpoint(api, tenant, { url, event_types: ["subject.imported"], secret });

    const imported = await importSubjects(api, tenant, ["r-1", "r-2"]);
    const event = await waitFor(() => {
      const found = receiver.lines.find((line) => line.type === "subject.imported");
      expect(found).toBeDefined();
      return found!;
    });
    expect(event).toMatchObject({ duplicate: false, data: { batch_id: imported.batch_id, imported: 2 } });

    // A replay delivers the same event (same webhook-id) again: acknowledged, marked as seen.
    const deliveries = await api.get(`${tenant.env}/webhook-deliveries?endpoint_id=${endpoint.id}`, {
      token: tenant.token,
    });
    const delivery = deliveries.body.items[0];
    await waitFor(async () => {
      const got = await api.get(`${tenant.env}/webhook-deliveries/${delivery.id}`, { token: tenant.token });
      expect(got.body.status).toBe("succeeded");
    });
    const replayed = await api.post(`${tenant.env}/webhook-deliveries/${delivery.id}/replay`, undefined, {
      token: tenant.token,
      idempotencyKey: ik(),
    });
    expect(replayed.status).toBe(200);
    await waitFor(() => expect(receiver.lines.filter((line) => line.id === event.id)).toHaveLength(2));
    expect(receiver.lines.filter((line) => line.id === event.id).map((line) => line.duplicate)).toEqual([
      false,
      true,
    ]);

    // Signed with another secret, or a body changed after signing: 400, nothing printed.
    const body = JSON.stringify({ ...event, type: "webhook.test" });
    const at = new Date();
    const headers = (key: string, signedBody: string) => ({
      "content-type": "application/json",
      "webhook-id": "forged",
      "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
      "webhook-signature": new Webhook(key).sign("forged", at, signedBody),
    });
    const other = `whsec_${randomBytes(32).toString("base64")}`;
    const forged = await fetch(url, { method: "POST", headers: headers(other, body), body });
    expect(forged.status).toBe(400);
    const tampered = await fetch(url, { method: "POST", headers: headers(secret, body), body: `${body} ` });
    expect(tampered.status).toBe(400);
    const valid = await fetch(url, { method: "POST", headers: headers(secret, body), body });
    expect(valid.status).toBe(204);
    await waitFor(() =>
      expect(receiver.lines.some((line) => line.id === event.id && line.type === "webhook.test")).toBe(true),
    );
    expect(receiver.lines.filter((line) => line.type === "webhook.test")).toHaveLength(1);
    expect(receiver.stderr.filter((line) => line.startsWith("rejected:"))).toHaveLength(2);
  });
});

describe("examples/backend", () => {
  it("imports the subjects of a file and starts an evaluation and a participant session for each", async () => {
    const { api, stack } = context;
    const tenant = await createTenant(api);
    const bundleId = await publishedBundle(api, tenant);
    const key = await createKey(api, tenant, ["subjects:write", "evaluations:write"]);
    const file = join(mkdtempSync(join(tmpdir(), "evalp-backend-")), "subjects.json");
    writeFileSync(
      file,
      JSON.stringify([
        { external_id: "emp-1", profile: { team: "payments" } },
        { external_id: "emp-2" },
        { external_id: "emp-1" },
      ]),
    );
    const env = {
      ...process.env,
      EVALP_URL: stack.url,
      EVALP_API_KEY: key.secret,
      EVALP_ENVIRONMENT: tenant.env,
      EVALP_BUNDLE_ID: bundleId,
    };
    const { stdout } = await run(process.execPath, [join(ROOT, "examples/backend/backend.mjs"), file], {
      env,
    });
    const lines = stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines.map((line) => [line.external_id, line.error])).toEqual([
      ["emp-1", undefined],
      ["emp-2", undefined],
      ["emp-1", "duplicate_in_batch"],
    ]);
    for (const line of lines.slice(0, 2)) {
      const evaluation = await api.get(`${tenant.env}/evaluations/${line.evaluation_id}`, {
        token: tenant.token,
      });
      expect(evaluation.body).toMatchObject({ subject_id: line.subject_id, bundle_id: bundleId });
      const subject = await api.get(`${tenant.env}/subjects/${line.subject_id}`, { token: tenant.token });
      expect(subject.body.external_id).toBe(line.external_id);
      // The session's token is the participant's: it starts the interview.
      const started = await api.post("/v1/participant/interview/start", undefined, {
        token: line.participant_token,
      });
      expect(started.status).toBe(200);
    }

    // The first participant finishes; `--results` then prints that evaluation's verdict alone.
    const first = participantClient(api, lines[0].participant_token);
    expect((await first.consent()).status).toBe(200);
    for (const [question, answer] of [
      ["q1", { value: 4 }],
      ["q2", { option_id: "a" }],
      ["q3", { value: 2 }],
    ] as const) {
      expect((await first.answer(question, answer)).status).toBe(200);
    }
    expect((await first.finish()).status).toBe(200);
    await vi.waitFor(
      async () => {
        const printed = await run(
          process.execPath,
          [join(ROOT, "examples/backend/backend.mjs"), "--results"],
          {
            env: { ...env, EVALP_BUNDLE_ID: "" },
          },
        );
        expect(
          printed.stdout
            .trim()
            .split("\n")
            .map((line) => JSON.parse(line)),
        ).toEqual([
          {
            evaluation_id: lines[0].evaluation_id,
            outcome: "completed",
            axes: { experience: { score: 40, band: "senior" }, skill: { score: 2, band: "low" } },
          },
        ]);
      },
      { timeout: 15_000, interval: 200 },
    );

    // A refusal ends the run with its code and request id: a bundle that is not published.
    const refused = await run(process.execPath, [join(ROOT, "examples/backend/backend.mjs"), file], {
      env: { ...env, EVALP_BUNDLE_ID: "0190c0de-0000-7000-8000-000000000000" },
    }).catch((error: { code: number; stderr: string }) => error);
    expect(refused).toMatchObject({ code: 1 });
    expect((refused as { stderr: string }).stderr).toMatch(/^404 not_found: .+ \(request [\w.-]+\)\n$/);
  });
});

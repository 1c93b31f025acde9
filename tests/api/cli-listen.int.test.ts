import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { verifyWebhook } from "@evalp/client";
import type { ReceivedRequest, Receiver } from "@evalp/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { ApiClient } from "./support/client.js";
import { type EventCatalog, loadEventCatalog, startCheckedReceiver } from "./support/event-catalog.js";
import { createKey, createTenant, expectError, type Tenant } from "./support/fixtures.js";
import { type Stack, useStack } from "./support/stack.js";
import { createEndpoint, importSubjects } from "./support/webhooks.js";

// `evalp listen` and `evalp trigger` as a developer runs them: the built CLI in its own process,
// against the real platform, forwarding to a local receiver that checks every request it gets
// against the document's webhooks (the checked receiver) and here against the printed secret.
const MAIN = fileURLToPath(new URL("../../packages/cli/bin/evalp.mjs", import.meta.url));

// A short upstream deadline: a stream must outlive it (it has none of its own).
const context = useStack({
  WEBHOOK_ALLOW_PRIVATE: "true",
  EVENT_STREAMS_PER_CREDENTIAL: "1",
  UPSTREAM_TIMEOUT_MS: "5000",
});
let stack: Stack;
let api: ApiClient;
let tenant: Tenant;
let receiver: Receiver;
let catalog: EventCatalog;
const listening: ChildProcessWithoutNullStreams[] = [];

beforeAll(async () => {
  ({ stack, api } = context);
  tenant = await createTenant(api);
  catalog = await loadEventCatalog(api);
  receiver = await startCheckedReceiver(api);
});
afterAll(async () => {
  for (const child of listening) child.kill();
  await receiver?.close();
});

/** The environment of the CLI's runs: the tenant's owner, in the tenant's environment. */
function cliEnv(): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "",
    HOME: "/nonexistent",
    EVALP_URL: stack.url,
    EVALP_TOKEN: tenant.token,
    EVALP_ORG: tenant.organizationId,
    EVALP_APP: tenant.appId,
    EVALP_ENV: tenant.environmentId,
  };
}

/** Runs `evalp …` to its end. */
async function evalp(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [MAIN, ...args], { env: cliEnv(), stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdin.end();
  const [code] = (await once(child, "close")) as [number | null];
  return { code, stdout, stderr };
}

/** Starts `evalp listen …` and answers once it says it is forwarding, with the secret it printed. */
async function listen(args: string[]): Promise<{ secret: string; output: () => string }> {
  const child = spawn(process.execPath, [MAIN, "listen", ...args], {
    env: cliEnv(),
    stdio: ["pipe", "pipe", "pipe"],
  });
  listening.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  await vi.waitFor(
    () => {
      expect(child.exitCode, stderr).toBeNull();
      expect(stdout, stderr).toContain("Ready: forwarding events to");
    },
    { timeout: 20_000, interval: 100 },
  );
  const secret = /Signing secret: (whsec_[A-Za-z0-9+/=]+)/.exec(stdout)?.[1];
  if (!secret) throw new Error(`no secret printed: ${stdout}`);
  return { secret, output: () => stdout + stderr };
}

/** The requests at `path` whose body is the event `id`, waited for. */
async function receivedEvent(path: string, id: string): Promise<ReceivedRequest> {
  return vi.waitFor(
    () => {
      const found = receiver.at(path).find((request) => JSON.parse(request.body).id === id);
      if (!found) throw new Error(`event ${id} not received at ${path}`);
      return found;
    },
    { timeout: 20_000, interval: 100 },
  );
}

describe("evalp listen --forward-to and evalp trigger", () => {
  let secret: string;
  let output: () => string;

  beforeAll(async () => {
    ({ secret, output } = await listen(["--forward-to", `${receiver.url}/local`]));
  });

  it("forwards a real event, signed with the secret it printed, as an endpoint receives it", async () => {
    await importSubjects(api, tenant, ["listen-1"]);
    const forwarded = await vi.waitFor(
      () => {
        const found = receiver
          .at("/local")
          .find((request) => JSON.parse(request.body).type === "subject.imported");
        if (!found) throw new Error("no subject.imported forwarded yet");
        return found;
      },
      { timeout: 20_000, interval: 100 },
    );
    const event = await verifyWebhook(secret, forwarded.headers, forwarded.body);
    expect(event).toMatchObject({ type: "subject.imported", environment_id: tenant.environmentId });
    expect(forwarded.headers["webhook-id"]).toBe(event.id);
    expect(catalog.problems(forwarded)).toEqual([]);
  });

  it("emits a sample of every type of the catalog, which listeners and subscribed endpoints receive", async () => {
    const endpoint = await createEndpoint(api, tenant, {
      url: `${receiver.url}/endpoint`,
      event_types: ["*"],
    });
    expect(catalog.types.length).toBeGreaterThan(10);
    for (const type of catalog.types) {
      const run = await evalp(["--json", "trigger", type]);
      expect(run.code, run.stderr).toBe(0);
      const emitted = JSON.parse(run.stdout);
      expect(emitted).toMatchObject({ type, environment_id: tenant.environmentId });
      expect(catalog.accepts(emitted), type).toBe(true);
      const forwarded = await receivedEvent("/local", emitted.id);
      // The same event (its stored form orders the keys of `data` its own way).
      expect(JSON.parse(forwarded.body)).toEqual(emitted);
      await expect(verifyWebhook(secret, forwarded.headers, forwarded.body)).resolves.toMatchObject({ type });
      expect(catalog.problems(forwarded), type).toEqual([]);
      // Through the outbox and the stream as any event: the endpoint gets it too, signed with its own secret.
      const delivered = await receivedEvent("/endpoint", emitted.id);
      expect(delivered.body).toBe(forwarded.body);
      await expect(verifyWebhook(endpoint.secret, delivered.headers, delivered.body)).resolves.toBeTruthy();
    }
  });

  it("kept one stream open all along, past the upstream deadline", () => {
    expect(output()).not.toMatch(/Connection lost|Cannot listen|Reconnected/);
  });

  it("refuses a type the catalog does not have, in the contract's shape", async () => {
    const run = await evalp(["trigger", "subject.exploded"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error validation_error: /);
    const refused = await api.post(
      `${tenant.env}/events/trigger`,
      { type: "subject.exploded" },
      { token: tenant.token, idempotencyKey: crypto.randomUUID() },
    );
    expect(refused.status).toBe(422);
  });
});

describe("GET ENV/events/stream", () => {
  it("refuses a credential without webhooks:read (403) and an environment it cannot see (404)", async () => {
    const key = await createKey(api, tenant, ["subjects:read"]);
    const forbidden = await api.get(`${tenant.env}/events/stream`, { apiKey: key.secret });
    expect(expectError(forbidden, 403, "forbidden").context).toMatchObject({
      required_scope: "webhooks:read",
    });
    const elsewhere = `${tenant.app}/environments/${crypto.randomUUID()}/events/stream`;
    expectError(await api.get(elsewhere, { token: tenant.token }), 404, "not_found");
  });

  it("refuses an unknown type to filter on with the validation error", async () => {
    const refused = await api.get(`${tenant.env}/events/stream?event_types=subject.exploded`, {
      token: tenant.token,
    });
    expect(refused.status).toBe(422);
    expect(refused.body.detail[0].loc).toEqual(["query", "event_types"]);
  });

  it("holds a credential to its cap of open streams (429), across the gateway", async () => {
    // The listener above holds the owner's one stream (EVENT_STREAMS_PER_CREDENTIAL=1).
    const refused = await api.get(`${tenant.env}/events/stream`, { token: tenant.token });
    expect(expectError(refused, 429, "rate_limited").context).toMatchObject({
      reason: "event_streams_per_credential",
      limit: 1,
    });
    expect(refused.headers.get("retry-after")).toBe("5");
  });

  it("ends a stream with an error event once its key is revoked (checked at the next heartbeat)", async () => {
    const key = await createKey(api, tenant, ["webhooks:read"], "revoked-listener");
    const response = await fetch(`${stack.url}${tenant.env}/events/stream`, {
      headers: { "x-api-key": key.secret },
    });
    expect(response.status).toBe(200);
    const revoked = await api.post(`${tenant.env}/api-keys/${key.id}/revoke`, undefined, {
      token: tenant.token,
      idempotencyKey: crypto.randomUUID(),
    });
    expect(revoked.status).toBe(200);
    // The stream ends by itself (a heartbeat comes within 15 s): read to its end.
    const text = await response.text();
    const ending = /event: error\ndata: (.+)\n\n$/.exec(text);
    expect(ending, text).not.toBeNull();
    expect(JSON.parse(ending?.[1] ?? "{}").detail).toMatchObject({ code: "api_key_revoked" });
  }, 40_000);

  it("streams events as Server-Sent Events, each the webhook body, only of the types asked for", async () => {
    const key = await createKey(api, tenant, ["webhooks:read"]);
    const cancel = new AbortController();
    const response = await fetch(`${stack.url}${tenant.env}/events/stream?event_types=webhook.test`, {
      headers: { "x-api-key": key.secret },
      signal: cancel.signal,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = "";
    try {
      for (const type of ["subject.imported", "webhook.test"]) {
        const run = await evalp(["trigger", type]);
        expect(run.code, run.stderr).toBe(0);
      }
      while (!text.includes("event: webhook.test")) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
    } finally {
      cancel.abort();
    }
    expect(text.startsWith("retry: 3000\n: open\n\n")).toBe(true);
    const message = /id: (\S+)\nevent: webhook\.test\ndata: (.+)\n\n/.exec(text);
    expect(message, text).not.toBeNull();
    const body = JSON.parse(message?.[2] ?? "{}");
    expect(body.id).toBe(message?.[1]);
    expect(catalog.accepts(body)).toBe(true);
    expect(text).not.toContain("subject.imported");
  });
});

import { randomUUID } from "node:crypto";
import type { Receiver } from "@evalp/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiClient } from "./support/client.js";
import { startCheckedReceiver } from "./support/event-catalog.js";
import { createTenant, ik, type Tenant } from "./support/fixtures.js";
import { type Stack, useStack } from "./support/stack.js";
import { waitForDelivery } from "./support/webhooks.js";

// Production's rule (docs/webhooks.md): https only, and no private, loopback or link-local target.
const context = useStack({ WEBHOOK_ALLOW_PRIVATE: "false", WEBHOOK_RETRY_SCHEDULE_MS: "60000" });
let stack: Stack;
let api: ApiClient;
let tenant: Tenant;
let receiver: Receiver;

beforeAll(async () => {
  ({ stack, api } = context);
  tenant = await createTenant(api);
  receiver = await startCheckedReceiver(api);
});
afterAll(async () => {
  await receiver?.close();
});

const port = () => new URL(receiver.url).port;

async function refused(url: string, method: "POST" | "PATCH" = "POST", path = `${tenant.env}/webhooks`) {
  const body = method === "POST" ? { url, event_types: ["*"] } : { url };
  const answer = await api.call(method, path, body, { token: tenant.token, idempotencyKey: ik() });
  expect(answer.status, JSON.stringify(answer.body)).toBe(422);
  const [item] = answer.body.detail;
  expect(item).toMatchObject({ loc: ["body", "url"], type: "value_error", input: url });
  return item.ctx.error as string;
}

describe("webhook targets when private addresses are not allowed", () => {
  it("refuses http, and https to loopback, private and link-local addresses, literal or resolved", async () => {
    expect(await refused(`http://example.com:${port()}/hook`)).toBe("url must use https");
    for (const url of [
      `https://127.0.0.1:${port()}/hook`,
      `https://localhost:${port()}/hook`,
      "https://10.0.0.8/hook",
      "https://169.254.169.254/latest/meta-data",
      "https://[::1]/hook",
      "https://[::ffff:127.0.0.1]/hook",
    ]) {
      expect(await refused(url), url).toBe("url resolves to a private, loopback or link-local address");
    }
    expect(receiver.requests).toHaveLength(0);
  });

  it("checks again at every attempt: a target that turned private is not called", async () => {
    // An endpoint whose name resolves to loopback now (as after a DNS change): written directly,
    // since the API refuses it.
    const id = randomUUID();
    await stack.pool("webhooks").query(
      `INSERT INTO webhook_endpoints (id, environment_id, url, event_types, secret)
       VALUES ($1, $2, $3, '{*}', $4)`,
      [
        id,
        tenant.environmentId,
        `https://localhost:${port()}/turned`,
        `whsec_${Buffer.alloc(32, 1).toString("base64")}`,
      ],
    );
    const tested = await api.post(`${tenant.env}/webhooks/${id}/test`, undefined, {
      token: tenant.token,
      idempotencyKey: ik(),
    });
    expect(tested.status).toBe(200);
    const failed = await waitForDelivery(api, tenant, tested.body.id, (d) => expect(d.status).toBe("failed"));
    expect(failed).toMatchObject({ attempt_count: 1, last_error: "private address not allowed" });
    expect(failed.response_status).toBeUndefined();
    expect(receiver.requests).toHaveLength(0);
    expect(await refused(`https://127.0.0.1:${port()}/x`, "PATCH", `${tenant.env}/webhooks/${id}`)).toMatch(
      /private/,
    );
  });
});

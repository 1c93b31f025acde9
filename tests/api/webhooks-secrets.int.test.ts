import { randomUUID } from "node:crypto";
import { createLogger, createRetention } from "@evalp/kit";
import type { ReceivedRequest, Receiver } from "@evalp/testing";
import { createSecretSealer, resealSecrets, webhooksRetention } from "@evalp/webhooks";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { ApiClient } from "./support/client.js";
import { startCheckedReceiver } from "./support/event-catalog.js";
import { createTenant, ik, type Tenant } from "./support/fixtures.js";
import { type Stack, useStack } from "./support/stack.js";
import { createEndpoint } from "./support/webhooks.js";

// Webhook secrets at rest (docs/webhooks.md#secrets-at-rest): sealed in the webhooks schema, shown
// only in the create and rotate answers, opened only to sign; a rotation's previous secret signs
// beside the new one for 24 h, then stops, and retention erases it.
const context = useStack({ WEBHOOK_ALLOW_PRIVATE: "true", WEBHOOK_RETRY_SCHEDULE_MS: "200,400" });
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

/** Every row of every table of the webhooks schema, as text. */
async function schemaText(): Promise<string> {
  const pool = stack.pool("webhooks");
  const tables = await pool.query<{ name: string }>(
    `SELECT quote_ident(table_name) AS name FROM information_schema.tables
     WHERE table_schema = 'webhooks' AND table_type = 'BASE TABLE'`,
  );
  expect(tables.rows.map((table) => table.name)).toContain("webhook_endpoints");
  const texts: string[] = [];
  for (const table of tables.rows) {
    const rows = await pool.query<{ row: string }>(`SELECT t::text AS row FROM ${table.name} t`);
    texts.push(...rows.rows.map((row) => row.row));
  }
  return texts.join("\n");
}

/** The secret's forms a dump could show: itself, and its base64 key without the prefix. */
function expectAbsent(text: string, secret: string) {
  expect(secret).toMatch(/^whsec_/);
  expect(text).not.toContain(secret);
  expect(text).not.toContain(secret.slice("whsec_".length));
}

/** Sends the endpoint a test event; the request the receiver got for it. */
async function testDelivery(endpointId: string, path: string): Promise<ReceivedRequest> {
  const before = receiver.at(path).length;
  const tested = await api.post(`${tenant.env}/webhooks/${endpointId}/test`, undefined, {
    token: tenant.token,
    idempotencyKey: ik(),
  });
  expect(tested.status).toBe(200);
  return vi.waitFor(
    () => {
      const got = receiver.at(path);
      expect(got.length).toBeGreaterThan(before);
      return got[got.length - 1] as ReceivedRequest;
    },
    { timeout: 10_000, interval: 20 },
  );
}

const verifies = (secret: string, request: ReceivedRequest) => {
  try {
    new Webhook(secret).verify(request.body, request.headers);
    return true;
  } catch {
    return false;
  }
};

async function rotate(endpointId: string): Promise<string> {
  const rotated = await api.post(`${tenant.env}/webhooks/${endpointId}/rotate-secret`, undefined, {
    token: tenant.token,
    idempotencyKey: ik(),
  });
  expect(rotated.status).toBe(200);
  return rotated.body.secret as string;
}

describe("webhook secrets at rest", () => {
  it("stores no secret in plain, through creation and rotation, and signs with both during the overlap", async () => {
    const given = `whsec_${Buffer.alloc(32, 9).toString("base64")}`;
    const chosen = await createEndpoint(api, tenant, {
      url: `${receiver.url}/given`,
      event_types: ["*"],
      secret: given,
    });
    const generated = await createEndpoint(api, tenant, {
      url: `${receiver.url}/sealed`,
      event_types: ["*"],
    });
    expect(chosen.secret).toBe(given);
    let dump = await schemaText();
    expectAbsent(dump, given);
    expectAbsent(dump, generated.secret);
    // The endpoint's own answers never carry it again.
    const read = await api.get(`${tenant.env}/webhooks/${generated.id}`, { token: tenant.token });
    expect(read.status).toBe(200);
    expect(JSON.stringify(read.body)).not.toContain(generated.secret);

    const first = await testDelivery(generated.id, "/sealed");
    expect(verifies(generated.secret, first)).toBe(true);

    const rotated = await rotate(generated.id);
    dump = await schemaText();
    expectAbsent(dump, generated.secret);
    expectAbsent(dump, rotated);

    // Within the 24 h: signed with both, each verifies on its own.
    const during = await testDelivery(generated.id, "/sealed");
    expect(during.headers["webhook-signature"]?.split(" ")).toHaveLength(2);
    expect(verifies(rotated, during)).toBe(true);
    expect(verifies(generated.secret, during)).toBe(true);
  });

  it("stops signing with the previous secret once it expired, and retention erases it", async () => {
    const endpoint = await createEndpoint(api, tenant, { url: `${receiver.url}/expiry`, event_types: ["*"] });
    const rotated = await rotate(endpoint.id);
    const pool = stack.pool("webhooks");
    // The 24 h over: the rotation moved a day into the past.
    await pool.query(
      "UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1",
      [endpoint.id],
    );
    const after = await testDelivery(endpoint.id, "/expiry");
    expect(after.headers["webhook-signature"]?.split(" ")).toHaveLength(1);
    expect(verifies(rotated, after)).toBe(true);
    expect(verifies(endpoint.secret, after)).toBe(false);

    const retention = createRetention({
      pool,
      logger: createLogger("test", "silent"),
      tasks: webhooksRetention(stack.config, createSecretSealer(stack.config)),
      batchSize: 100,
      intervalMs: 60_000,
    });
    await vi.waitFor(
      async () => {
        const round = await retention.round();
        expect(round.skipped).toBe(false);
      },
      { timeout: 10_000, interval: 100 },
    );
    const row = await pool.query(
      `SELECT previous_secret, previous_secret_sealed, previous_secret_key_id, previous_secret_expires_at,
         secret_sealed IS NOT NULL AS sealed
       FROM webhook_endpoints WHERE id = $1`,
      [endpoint.id],
    );
    expect(row.rows[0]).toEqual({
      previous_secret: null,
      previous_secret_sealed: null,
      previous_secret_key_id: null,
      previous_secret_expires_at: null,
      sealed: true,
    });
    expect(verifies(rotated, await testDelivery(endpoint.id, "/expiry"))).toBe(true);
  });

  it("seals the secrets of rows stored in plain before, and they still sign", async () => {
    // A row as the previous release wrote it: its secret in the plain column.
    const id = randomUUID();
    const plain = `whsec_${Buffer.alloc(32, 5).toString("base64")}`;
    const pool = stack.pool("webhooks");
    await pool.query(
      `INSERT INTO webhook_endpoints (id, environment_id, url, event_types, secret)
       VALUES ($1, $2, $3, '{*}', $4)`,
      [id, tenant.environmentId, `${receiver.url}/legacy`, plain],
    );
    // Read while still plain, as the process does until the re-seal reaches the row.
    expect(verifies(plain, await testDelivery(id, "/legacy"))).toBe(true);

    const sealer = createSecretSealer(stack.config);
    await vi.waitFor(
      async () => {
        const done = await resealSecrets(pool, sealer);
        expect(done).toMatchObject({ skipped: false, unopened: 0 });
      },
      { timeout: 10_000, interval: 100 },
    );
    const row = await pool.query("SELECT secret, secret_key_id FROM webhook_endpoints WHERE id = $1", [id]);
    expect(row.rows[0]).toEqual({ secret: null, secret_key_id: sealer.kid });
    expectAbsent(await schemaText(), plain);
    expect(verifies(plain, await testDelivery(id, "/legacy"))).toBe(true);
  });
});

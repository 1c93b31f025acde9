import { createPool, newId, type Pool } from "@evalp/kit";
import { createTestDatabase, type TestDatabase } from "@evalp/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertEndpoint, rotateEndpointSecret } from "./db/endpoints.js";
import {
  createSecretSealer,
  resealSecrets,
  type SecretEnvelope,
  secretEnvelopesSql,
} from "./sealed-secrets.js";
import { generateSecret } from "./secrets.js";
import { migrations } from "./server.js";

// Key rotation of docs/operations.md#webhook-secrets-key against a real `webhook_endpoints`.
const ENVIRONMENT = "01936f6e-7a2b-7c3d-8e4f-5a6b7c8d9e0f";
const OLD = `old:${"o".repeat(40)}`;
const NEW = `new:${"n".repeat(40)}`;

let database: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  database = await createTestDatabase([migrations]);
  pool = createPool({ databaseUrl: database.url, schema: migrations.schema, max: 2 });
});
afterAll(async () => {
  await pool?.end();
  await database?.drop();
});

async function envelopes(id: string) {
  const found = await pool.query<{ secret: SecretEnvelope; previous_secret: SecretEnvelope | null }>(
    `SELECT ${secretEnvelopesSql("e")} FROM webhook_endpoints e WHERE e.id = $1`,
    [id],
  );
  return found.rows[0] as { secret: SecretEnvelope; previous_secret: SecretEnvelope | null };
}

describe("sealed endpoint secrets", () => {
  it("re-seal under the new key once it comes first, and then open without the old one", async () => {
    const before = createSecretSealer({ WEBHOOK_SECRETS_KEYS: OLD });
    const id = newId();
    const first = generateSecret();
    const second = generateSecret();
    await insertEndpoint(pool, {
      id,
      environmentId: ENVIRONMENT,
      url: "https://receiver.example/",
      eventTypes: ["*"],
      secret: before.seal(id, first),
      enabled: true,
    });
    await rotateEndpointSecret(pool, id, before.seal(id, second), 60_000);

    // Step 1: the new key first, the old still listed: old rows open, new writes use the new key.
    const both = createSecretSealer({ WEBHOOK_SECRETS_KEYS: `${NEW},${OLD}` });
    let sealed = await envelopes(id);
    expect(both.open(id, sealed.secret)).toBe(second);
    // Step 2: the re-seal rewrites every row under the new key.
    expect(await resealSecrets(pool, both)).toEqual({ resealed: 1, unopened: 0, skipped: false });
    expect(await resealSecrets(pool, both)).toEqual({ resealed: 0, unopened: 0, skipped: false });
    const keys = await pool.query(
      "SELECT secret_key_id, previous_secret_key_id FROM webhook_endpoints WHERE id = $1",
      [id],
    );
    expect(keys.rows[0]).toEqual({ secret_key_id: "new", previous_secret_key_id: "new" });
    // Step 3: the old key dropped.
    const after = createSecretSealer({ WEBHOOK_SECRETS_KEYS: NEW });
    sealed = await envelopes(id);
    expect(after.open(id, sealed.secret)).toBe(second);
    expect(after.open(id, sealed.previous_secret as SecretEnvelope)).toBe(first);
    // A sealed secret does not open for another endpoint, nor under a key no longer held.
    expect(after.open(newId(), sealed.secret)).toBeNull();
    expect(createSecretSealer({ WEBHOOK_SECRETS_KEYS: OLD }).open(id, sealed.secret)).toBeNull();
  });

  it("leaves, and counts, a row no key held opens", async () => {
    const lost = createSecretSealer({ WEBHOOK_SECRETS_KEYS: `lost:${"l".repeat(40)}` });
    const id = newId();
    await insertEndpoint(pool, {
      id,
      environmentId: ENVIRONMENT,
      url: "https://receiver.example/",
      eventTypes: ["*"],
      secret: lost.seal(id, generateSecret()),
      enabled: true,
    });
    const current = createSecretSealer({ WEBHOOK_SECRETS_KEYS: NEW });
    expect(await resealSecrets(pool, current)).toEqual({ resealed: 0, unopened: 1, skipped: false });
    const row = await pool.query("SELECT secret_key_id FROM webhook_endpoints WHERE id = $1", [id]);
    expect(row.rows[0]).toEqual({ secret_key_id: "lost" });
  });

  it("take a plain secret written beside a sealed one (a process of the previous release) as the newer", async () => {
    const sealer = createSecretSealer({ WEBHOOK_SECRETS_KEYS: NEW });
    const id = newId();
    await insertEndpoint(pool, {
      id,
      environmentId: ENVIRONMENT,
      url: "https://receiver.example/",
      eventTypes: ["*"],
      secret: sealer.seal(id, generateSecret()),
      enabled: true,
    });
    // The previous release's rotation writes the plain column only.
    const rotated = generateSecret();
    await pool.query("UPDATE webhook_endpoints SET secret = $2 WHERE id = $1", [id, rotated]);
    expect(sealer.open(id, (await envelopes(id)).secret)).toBe(rotated);
    expect(await resealSecrets(pool, sealer)).toMatchObject({ resealed: 1 });
    const row = await pool.query("SELECT secret FROM webhook_endpoints WHERE id = $1", [id]);
    expect(row.rows[0]).toEqual({ secret: null });
    expect(sealer.open(id, (await envelopes(id)).secret)).toBe(rotated);
  });

  it("opens a secret it already opened only for the endpoint it was sealed for, and never a changed one", () => {
    const sealer = createSecretSealer({ WEBHOOK_SECRETS_KEYS: NEW });
    const [endpoint, other] = [newId(), newId()];
    const secret = generateSecret();
    const { sealed, kid } = sealer.seal(endpoint, secret);
    const envelope = `${kid}:${sealed}` as SecretEnvelope;
    for (let i = 0; i < 2; i++) expect(sealer.open(endpoint, envelope)).toBe(secret);
    // Copied to another endpoint's row, it does not open there, before or after it was opened.
    expect(sealer.open(other, envelope)).toBeNull();
    const [version, iv, tag, body = ""] = sealed.split(".");
    const flipped = `${body.startsWith("A") ? "B" : "A"}${body.slice(1)}`;
    const changed = `${kid}:${[version, iv, tag, flipped].join(".")}` as SecretEnvelope;
    expect(sealer.open(endpoint, changed)).toBeNull();
  });
});

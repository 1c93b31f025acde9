import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { verifyWebhook, type WebhookEvent, WebhookVerificationError } from "./index.js";

const secret = () => `whsec_${randomBytes(32).toString("base64")}`;
const EVENT = {
  id: "0190c0de-0000-7000-8000-0000000000e1",
  type: "webhook.test",
  timestamp: "2026-11-25T10:00:00.000Z",
  environment_id: "0190c0de-0000-7000-8000-0000000000e2",
  data: {},
};

/** Headers as the webhooks service signs an attempt: one signature per secret, space-separated. */
function signed(secrets: string[], body: string, at = new Date()) {
  return {
    "content-type": "application/json",
    "webhook-id": EVENT.id,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": secrets.map((one) => new Webhook(one).sign(EVENT.id, at, body)).join(" "),
  };
}

describe("verifyWebhook", () => {
  const key = secret();
  const body = JSON.stringify(EVENT);

  it("returns the typed event of a correctly signed request", async () => {
    const event: WebhookEvent = await verifyWebhook(key, signed([key], body), body);
    expect(event).toEqual(EVENT);
    expect(event.type).toBe("webhook.test");
  });

  it("takes fetch Headers, mixed-case names and a raw byte body", async () => {
    const headers = new Headers(signed([key], body));
    expect((await verifyWebhook(key, headers, Buffer.from(body))).id).toBe(EVENT.id);
    const mixed = Object.fromEntries(
      Object.entries(signed([key], body)).map(([name, value]) => [name.toUpperCase(), value]),
    );
    expect((await verifyWebhook(key, mixed, new TextEncoder().encode(body))).id).toBe(EVENT.id);
  });

  it("verifies with either secret while a rotation signs with both", async () => {
    const next = secret();
    const headers = signed([next, key], body);
    expect((await verifyWebhook(key, headers, body)).id).toBe(EVENT.id);
    expect((await verifyWebhook(next, headers, body)).id).toBe(EVENT.id);
  });

  it("refuses a changed body, another secret, a missing signature and a stale or future timestamp", async () => {
    const headers = signed([key], body);
    await expect(verifyWebhook(key, headers, body.replace("webhook.test", "webhook.tost"))).rejects.toThrow(
      WebhookVerificationError,
    );
    await expect(verifyWebhook(secret(), headers, body)).rejects.toThrow(WebhookVerificationError);
    const { "webhook-signature": _, ...unsigned } = headers;
    await expect(verifyWebhook(key, unsigned, body)).rejects.toThrow(WebhookVerificationError);
    const old = signed([key], body, new Date(Date.now() - 10 * 60_000));
    await expect(verifyWebhook(key, old, body)).rejects.toThrow(WebhookVerificationError);
    const future = signed([key], body, new Date(Date.now() + 10 * 60_000));
    await expect(verifyWebhook(key, future, body)).rejects.toThrow(WebhookVerificationError);
    const otherVersion = {
      ...headers,
      "webhook-signature": headers["webhook-signature"].replace("v1,", "v2,"),
    };
    await expect(verifyWebhook(key, otherVersion, body)).rejects.toThrow(WebhookVerificationError);
  });

  it("agrees with the Standard Webhooks reference library on signatures it makes", async () => {
    for (let i = 0; i < 20; i++) {
      const one = secret();
      const text = JSON.stringify({ ...EVENT, data: { n: i, text: "é ✓ \u0000".repeat(i) } });
      const at = new Date(Date.now() - i * 1000);
      const headers = signed([one], text, at);
      expect(await verifyWebhook(one, headers, text)).toEqual(new Webhook(one).verify(text, headers));
    }
  });
});

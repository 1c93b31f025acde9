import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { generateSecret, secretProblem } from "./secrets.js";
import { deliveryHeaders } from "./sign.js";

describe("deliveryHeaders", () => {
  const body = JSON.stringify({ id: "e1", type: "webhook.test", data: {} });

  it("signs as docs/webhooks.md says: HMAC-SHA256 over id.timestamp.body with the decoded secret", () => {
    const secret = generateSecret();
    const at = new Date();
    const headers = deliveryHeaders([secret], "e1", at, body);
    const key = Buffer.from(secret.slice("whsec_".length), "base64");
    const expected = createHmac("sha256", key)
      .update(`e1.${Math.floor(at.getTime() / 1000)}.${body}`)
      .digest("base64");
    expect(headers["webhook-signature"]).toBe(`v1,${expected}`);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it("signs with both secrets during a rotation, and either verifies", () => {
    const [next, previous] = [generateSecret(), generateSecret()];
    const headers = deliveryHeaders([next, previous], "e1", new Date(), body);
    expect(headers["webhook-signature"].split(" ")).toHaveLength(2);
    expect(() => new Webhook(next).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(previous).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(generateSecret()).verify(body, headers)).toThrow();
  });
});

describe("secretProblem", () => {
  it("accepts whsec_ + base64 of 24-64 bytes only", () => {
    expect(secretProblem(generateSecret())).toBeNull();
    expect(secretProblem(`whsec_${Buffer.alloc(24, 1).toString("base64")}`)).toBeNull();
    expect(secretProblem(`whsec_${Buffer.alloc(64, 1).toString("base64")}`)).toBeNull();
    expect(secretProblem(`whsec_${Buffer.alloc(23, 1).toString("base64")}`)).toMatch(/24 to 64/);
    expect(secretProblem(`whsec_${Buffer.alloc(65, 1).toString("base64")}`)).toMatch(/24 to 64/);
    expect(secretProblem("sk_abc")).toMatch(/whsec_/);
    expect(secretProblem("whsec_not base64!")).toMatch(/base64/);
  });
});

import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { openOutcome, sealOutcome } from "./idempotency-keys.js";

describe("a key's stored outcome", () => {
  it("opens with the key it was sealed with, and shows nothing of itself sealed", () => {
    const key = randomBytes(32);
    const plain = JSON.stringify({ message: "secret sk_live_1234" });
    const sealed = sealOutcome(key, plain);
    expect(sealed.toString("latin1")).not.toContain("sk_live_1234");
    expect(openOutcome(key, sealed)).toBe(plain);
  });

  it("does not open with another key (a rotated secret) or once tampered with", () => {
    const sealed = sealOutcome(randomBytes(32), "{}");
    expect(openOutcome(randomBytes(32), sealed)).toBeNull();
    const key = randomBytes(32);
    const tampered = sealOutcome(key, '{"message":"a"}');
    tampered[tampered.length - 1] = (tampered[tampered.length - 1] ?? 0) ^ 1;
    expect(openOutcome(key, tampered)).toBeNull();
    expect(openOutcome(key, Buffer.alloc(4))).toBeNull();
  });
});

import { hkdfSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createSeal, hkdfKeys } from "./records.js";

describe("createSeal", () => {
  it("opens what it sealed, and nothing else: no clear text inside, another secret or a change refused", () => {
    const seal = createSeal("a".repeat(40));
    const sealed = seal.seal('{"secret":"evk_visible"}');
    expect(sealed).not.toContain("evk_visible");
    expect(seal.open(sealed)).toBe('{"secret":"evk_visible"}');
    expect(createSeal("b".repeat(40)).open(sealed)).toBeNull();
    const [version, iv, tag, body] = sealed.split(".");
    const flipped = `${body?.[0] === "A" ? "B" : "A"}${body?.slice(1)}`;
    expect(seal.open([version, iv, tag, flipped].join("."))).toBeNull();
    expect(seal.open('{"status":200}')).toBeNull();
  });

  it("seals under a fresh IV every time, across refills of its pool of random bytes", () => {
    const seal = createSeal("a".repeat(40));
    const ivs = new Set<string>();
    for (let i = 0; i < 600; i++) {
      const sealed = seal.seal("same");
      ivs.add(sealed.split(".")[1] ?? "");
      expect(seal.open(sealed)).toBe("same");
    }
    expect(ivs.size).toBe(600);
  });

  it("gives each key identity a plane key of its own, which only the same secret derives again", () => {
    const seal = createSeal("a".repeat(40));
    const key = seal.planeKey("identity-1");
    expect(Buffer.from(key, "base64url")).toHaveLength(32);
    expect(createSeal("a".repeat(40)).planeKey("identity-1")).toBe(key);
    expect(seal.planeKey("identity-2")).not.toBe(key);
    expect(createSeal("b".repeat(40)).planeKey("identity-1")).not.toBe(key);
  });

  it("derives the plane key as HKDF-SHA256 (salt evalp) does, so a plane opens what an earlier release sealed", () => {
    const secret = "s".repeat(40);
    const id = "0f".repeat(32);
    const hkdf = Buffer.from(hkdfSync("sha256", secret, "evalp", `idempotency plane outcome ${id}`, 32));
    expect(createSeal(secret).planeKey(id)).toBe(hkdf.toString("base64url"));
    const derive = hkdfKeys(secret);
    for (const info of ["", "x", "é".repeat(100)]) {
      expect(derive(info)).toEqual(Buffer.from(hkdfSync("sha256", secret, "evalp", info, 32)));
    }
  });
});

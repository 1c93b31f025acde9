import { describe, expect, it } from "vitest";
import { createSealer, parseSealingSecrets } from "./sealing.js";

const OLD = { kid: "k1", secret: "a".repeat(40) };
const NEW = { kid: "k2", secret: "b".repeat(40) };

describe("createSealer", () => {
  it("seals with the first key and opens with any it holds, by key id", () => {
    const before = createSealer("test", [OLD]);
    const sealed = before.seal("whsec_visible");
    expect(sealed).not.toContain("visible");
    expect(before.kid).toBe("k1");
    const rotated = createSealer("test", [NEW, OLD]);
    expect(rotated.kid).toBe("k2");
    expect(rotated.open(sealed, "k1")).toBe("whsec_visible");
    expect(rotated.open(rotated.seal("x"), "k2")).toBe("x");
    // The wrong key id, a key it no longer holds, another purpose: nothing.
    expect(rotated.open(sealed, "k2")).toBeNull();
    expect(createSealer("test", [NEW]).open(sealed, "k1")).toBeNull();
    expect(createSealer("other", [OLD]).open(sealed, "k1")).toBeNull();
  });

  it("binds a value to its context: copied elsewhere it does not open", () => {
    const sealer = createSealer("test", [OLD]);
    const sealed = sealer.seal("s", "row-1");
    expect(sealer.open(sealed, "k1", "row-1")).toBe("s");
    expect(sealer.open(sealed, "k1", "row-2")).toBeNull();
    expect(sealer.open(sealed, "k1")).toBeNull();
  });
});

describe("parseSealingSecrets", () => {
  it("reads kid:secret pairs, the first first, and refuses short secrets, bad or repeated key ids", () => {
    expect(parseSealingSecrets("S", ` k2:${"b".repeat(32)}, k1:${"a".repeat(32)} `)).toEqual([
      { kid: "k2", secret: "b".repeat(32) },
      { kid: "k1", secret: "a".repeat(32) },
    ]);
    expect(() => parseSealingSecrets("S", "k1:short")).toThrow(/32/);
    expect(() => parseSealingSecrets("S", `:${"a".repeat(32)}`)).toThrow(/kid/);
    expect(() => parseSealingSecrets("S", `k1:${"a".repeat(32)},k1:${"b".repeat(32)}`)).toThrow(/twice/);
    expect(() => parseSealingSecrets("S", "")).toThrow(/required/);
  });
});

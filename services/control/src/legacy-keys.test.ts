import { describe, expect, it } from "vitest";
import { parseLegacyKeys } from "./legacy-keys.js";

const HASH = "a".repeat(64);
const ENV = "01936f6e-7a2b-7c3d-8e4f-5a6b7c8d9e0f";

describe("parseLegacyKeys", () => {
  it("reads comma-separated hash:environment pairs", () => {
    expect(parseLegacyKeys("")).toEqual(new Map());
    expect(parseLegacyKeys(` ${HASH.toUpperCase()}:${ENV} , `)).toEqual(new Map([[HASH, ENV]]));
  });

  it("refuses entries that are not a SHA-256 hex and an environment id", () => {
    expect(() => parseLegacyKeys("plaintext-key")).toThrow();
    expect(() => parseLegacyKeys(`${HASH}:not-a-uuid`)).toThrow();
    expect(() => parseLegacyKeys(`${HASH.slice(1)}:${ENV}`)).toThrow();
  });
});

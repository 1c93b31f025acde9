import { describe, expect, it } from "vitest";
import { API_KEY_PATTERN, newAccessToken, newApiKey, randomBase62 } from "./credentials.js";

describe("credentials", () => {
  it("makes API keys of the contract's form evk_<8>_<32> with their prefix", () => {
    const key = newApiKey();
    expect(key.secret).toMatch(API_KEY_PATTERN);
    expect(key.prefix).toMatch(/^evk_[0-9A-Za-z]{8}$/);
    expect(key.secret.startsWith(`${key.prefix}_`)).toBe(true);
  });

  it("never repeats a token and draws every base62 character", () => {
    const tokens = new Set(Array.from({ length: 1000 }, () => newAccessToken()));
    expect(tokens.size).toBe(1000);
    const characters = new Set(randomBase62(20_000));
    expect(characters.size).toBe(62);
  });
});

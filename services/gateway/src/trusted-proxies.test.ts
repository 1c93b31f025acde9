import { describe, expect, it } from "vitest";
import { trustedProxies } from "./app.js";

describe("trustedProxies (TRUSTED_PROXIES)", () => {
  it("trusts no proxy by default, a hop count, or the listed addresses and CIDRs", () => {
    expect(trustedProxies("")).toBe(false);
    expect(trustedProxies(" 10.0.0.0/8, 192.168.1.7 ")).toEqual(["10.0.0.0/8", "192.168.1.7"]);
    const hops = trustedProxies("2") as (address: string, hop: number) => boolean;
    expect([0, 1, 2].map((hop) => hops("10.0.0.1", hop))).toEqual([true, true, false]);
  });
});

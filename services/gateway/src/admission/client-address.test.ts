import { describe, expect, it } from "vitest";
import { addressKey } from "./client-address.js";

describe("addressKey (what the per-address limits count)", () => {
  it("counts an IPv6 client by its /64: every address of one /64 is one client", () => {
    const key = addressKey("2001:db8:1:2::1");
    expect(key).toBe("2001:db8:1:2::/64");
    for (const address of [
      "2001:db8:1:2:ffff:ffff:ffff:ffff",
      "2001:0db8:0001:0002:abcd::9",
      "2001:DB8:1:2::7",
    ]) {
      expect(addressKey(address), address).toBe(key);
    }
    expect(addressKey("2001:db8:1:3::1")).toBe("2001:db8:1:3::/64");
    expect(addressKey("fe80::1%eth0")).toBe("fe80::/64");
  });

  it("counts an IPv4 client by its address, and an IPv4-mapped IPv6 one as that IPv4 address", () => {
    expect(addressKey("203.0.113.7")).toBe("203.0.113.7");
    expect(addressKey("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(addressKey("::ffff:cb00:7107")).toBe("203.0.113.7");
    // Not mapped: an IPv6 address whose last 32 bits are written dotted.
    expect(addressKey("2001:db8::203.0.113.7")).toBe("2001:db8::/64");
    expect(addressKey("::203.0.113.7")).toBe("::/64");
  });
});

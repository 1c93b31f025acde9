import { describe, expect, it } from "vitest";
import { type Admission, addressKey, judge } from "./step.js";

const limits = { perAddress: 10, refusalsPerAddress: 3, perCredential: 5 };
const fresh = (): Admission => ({ identity: { kind: "none" } });
const window = (count: number, resetMs = 30_000) => ({ count, resetMs });

describe("the admission's judgement of the windows it counted", () => {
  it("shows the credential's window once proven, and refuses nothing within the limits", () => {
    const admission = fresh();
    judge(admission, { address: window(4), refusals: window(0), credential: window(5) }, limits);
    expect(admission.over).toBeUndefined();
    expect(admission.shown).toEqual({ limit: 5, window: window(5) });
  });

  it("refuses an address past its refusals before it looks at its count or its credential", () => {
    const admission = fresh();
    judge(admission, { address: window(11), refusals: window(3, 2_000) }, limits);
    expect(admission.over).toEqual({ limit: 3, window: window(3, 2_000), name: "address_refusals" });
    expect(admission.shown).toEqual({ limit: 3, window: window(3, 2_000) });
  });

  it("refuses an address past its own limit, then a credential past its own", () => {
    const address = fresh();
    judge(address, { address: window(11), refusals: window(0) }, limits);
    expect(address.over?.name).toBe("address");
    const credential = fresh();
    judge(credential, { address: window(1), refusals: window(0), credential: window(6) }, limits);
    expect(credential.over).toEqual({ limit: 5, window: window(6), name: "credential" });
  });

  it("keeps the first refusal when a second round trip counts the credential", () => {
    const admission = fresh();
    judge(admission, { address: window(11), refusals: window(0) }, limits);
    judge(admission, { credential: window(1) }, limits);
    expect(admission.over?.name).toBe("address");
  });
});

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

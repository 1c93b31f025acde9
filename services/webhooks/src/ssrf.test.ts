import { describe, expect, it } from "vitest";
import { checkTarget, isGlobalUnicast, isPrivateAddress, TargetRefused, urlProblem } from "./ssrf.js";

describe("isGlobalUnicast (the allow rule of docs/webhooks.md)", () => {
  it("refuses every IPv4 special-purpose range", () => {
    for (const address of [
      "0.0.0.0",
      "0.1.2.3",
      "10.1.2.3",
      "100.64.0.1",
      "100.127.255.254",
      "127.0.0.1",
      "169.254.169.254",
      "172.16.0.1",
      "172.31.255.255",
      "192.0.0.8",
      "192.0.2.1",
      "192.31.196.1",
      "192.52.193.1",
      "192.88.99.1",
      "192.168.1.1",
      "192.175.48.1",
      "198.18.0.1",
      "198.19.255.255",
      "198.51.100.1",
      "203.0.113.1",
      "224.0.0.1",
      "239.255.255.250",
      "240.0.0.1",
      "255.255.255.255",
    ]) {
      expect(isGlobalUnicast(address), address).toBe(false);
      expect(isPrivateAddress(address), address).toBe(true);
    }
  });

  it("refuses IPv6 outside 2000::/3 and the special-purpose ranges inside it", () => {
    for (const address of [
      "::",
      "::1",
      // IPv4-compatible (deprecated) and IPv4-translated (::ffff:0:0:0/96).
      "::8.8.8.8",
      "::ffff:0:808:808",
      // NAT64, well-known and local-use.
      "64:ff9b::8.8.8.8",
      "64:ff9b:1::1",
      "64:ff9b:1:ffff::1",
      "100::1",
      // Teredo, the rest of 2001::/23, documentation, 6to4 (even of a public IPv4), benchmarking, ORCHIDv2.
      "2001::1",
      "2001:0:4136:e378:8000:63bf:3fff:fdd2",
      "2001:2::1",
      "2001:10::1",
      "2001:20::1",
      "2001:db8::1",
      "2001:db8:ffff::1",
      "2002::1",
      "2002:808:808::1",
      "3fff::1",
      // Site-local (deprecated), unique local, link-local, multicast, and beyond 2000::/3.
      "fec0::1",
      "feff::1",
      "fc00::1",
      "fd12:3456::1",
      "fe80::1",
      "ff02::1",
      "4000::1",
      "1000::1",
    ]) {
      expect(isGlobalUnicast(address), address).toBe(false);
    }
  });

  it("judges an IPv4-mapped IPv6 address (::ffff:0:0/96) by the IPv4 address inside", () => {
    for (const address of [
      "::ffff:127.0.0.1",
      "::ffff:7f00:1",
      "::ffff:a9fe:a9fe",
      "::ffff:192.88.99.1",
      "::ffff:10.0.0.1",
    ]) {
      expect(isGlobalUnicast(address), address).toBe(false);
    }
    expect(isGlobalUnicast("::ffff:8.8.8.8")).toBe(true);
    expect(isGlobalUnicast("::ffff:808:808")).toBe(true);
  });

  it("allows global unicast addresses of both families", () => {
    for (const address of [
      "93.184.216.34",
      "8.8.8.8",
      "1.1.1.1",
      "172.32.0.1",
      "100.128.0.1",
      "192.88.98.1",
      "2606:4700::1111",
      "2a00:1450:4001:82a::200e",
      "2001:4860:4860::8888",
      "2c0f:fb50:4003::1",
    ]) {
      expect(isGlobalUnicast(address), address).toBe(true);
      expect(isPrivateAddress(address), address).toBe(false);
    }
  });

  it("refuses what is not an address in its usual form", () => {
    for (const address of [
      "",
      "localhost",
      "127.1",
      "0x7f000001",
      "2130706433",
      "1.2.3.4.5",
      "fe80::1%eth0",
    ]) {
      expect(isGlobalUnicast(address), address).toBe(false);
    }
  });
});

describe("urlProblem", () => {
  it("wants https unless private targets are allowed, and no credentials", () => {
    expect(urlProblem("https://example.com/hook", false)).toBeNull();
    expect(urlProblem("http://example.com/hook", false)).toBe("url must use https");
    expect(urlProblem("http://example.com/hook", true)).toBeNull();

    expect(urlProblem("ftp://example.com/", true)).toBe("url must use http or https");
    expect(urlProblem("https://user:pw@example.com/", false)).toBe("url must not contain credentials");
    expect(urlProblem("not a url", false)).toBe("url is not a valid absolute URL");
  });
});

describe("checkTarget", () => {
  const resolveTo =
    (...addresses: string[]) =>
    async () =>
      addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));

  it("refuses a name that resolves to any private address", async () => {
    await expect(
      checkTarget("https://internal.example/", false, resolveTo("93.184.216.34", "10.0.0.5")),
    ).rejects.toThrow(TargetRefused);
    await expect(checkTarget("https://[::1]:8443/", false, resolveTo())).rejects.toThrow("private address");
    await expect(checkTarget("https://127.0.0.1/", false, resolveTo())).rejects.toThrow("private address");
    await expect(
      checkTarget("https://example.com/", false, resolveTo("93.184.216.34")),
    ).resolves.toBeUndefined();
  });

  it("refuses a public https target on a port other than 443, which the egress policy keeps closed", async () => {
    const publicHost = resolveTo("93.184.216.34");
    await expect(checkTarget("https://example.com:443/hook", false, publicHost)).resolves.toBeUndefined();
    await expect(checkTarget("https://example.com:8443/hook", false, publicHost)).rejects.toThrow(
      "url must use https's port 443",
    );
    await expect(checkTarget("https://example.com:8443/hook", true, publicHost)).resolves.toBeUndefined();
  });

  it("allows anything http(s) with WEBHOOK_ALLOW_PRIVATE", async () => {
    await expect(checkTarget("http://127.0.0.1:9/", true, resolveTo())).resolves.toBeUndefined();
  });
});

import { describe, expect, it } from "vitest";
import { checkTarget, isPrivateAddress, TargetRefused, urlProblem } from "./ssrf.js";

describe("isPrivateAddress", () => {
  it("refuses private, loopback, link-local and reserved addresses of both families", () => {
    for (const address of [
      "127.0.0.1",
      "10.1.2.3",
      "172.16.0.1",
      "172.31.255.255",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "224.0.0.1",
      "::1",
      "::",
      "fe80::1",
      "fd00::1",
      "::ffff:127.0.0.1",
      "::ffff:7f00:1",
      "::ffff:a9fe:a9fe",
    ]) {
      expect(isPrivateAddress(address), address).toBe(true);
    }
  });

  it("lets public addresses through", () => {
    for (const address of ["93.184.216.34", "8.8.8.8", "172.32.0.1", "2606:4700::1111", "::ffff:8.8.8.8"]) {
      expect(isPrivateAddress(address), address).toBe(false);
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

import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { apiClient } from "./support/client.js";
import { type Stack, startStack } from "./support/stack.js";

// Who the client is, for the limits that count addresses: the peer, unless the peer is a proxy
// TRUSTED_PROXIES names, whose X-Forwarded-For then names the client.
const LIMIT = 5;
const stacks: Stack[] = [];
afterAll(async () => {
  for (const stack of stacks) await stack.close();
});

/** Made-up API keys from the client `forwardedFor` names, one after another: their statuses. */
async function madeUpKeys(url: string, forwardedFor: string, count: number): Promise<number[]> {
  const api = apiClient(url);
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) {
    const answer = await api.get("/v1/auth/principal", {
      apiKey: `evk_${randomBytes(24).toString("base64url")}`,
      headers: { "x-forwarded-for": forwardedFor },
    });
    statuses.push(answer.status);
  }
  return statuses;
}

describe("the client's address", () => {
  it("is the peer's when the peer is no trusted proxy: what it says in X-Forwarded-For is ignored", async () => {
    const stack = await startStack({ RATE_LIMIT_PER_MINUTE: String(LIMIT), TRUSTED_PROXIES: "10.0.0.0/8" });
    stacks.push(stack);
    expect(await madeUpKeys(stack.url, "203.0.113.1", LIMIT)).toEqual(Array(LIMIT).fill(401));
    // Another "client" named by the same untrusted peer shares the peer's used-up refusals.
    expect(await madeUpKeys(stack.url, "203.0.113.2", 1)).toEqual([429]);
  });

  it("is the one a trusted proxy names, each with limits of its own", async () => {
    const stack = await startStack({ RATE_LIMIT_PER_MINUTE: String(LIMIT), TRUSTED_PROXIES: "127.0.0.1/32" });
    stacks.push(stack);
    expect(await madeUpKeys(stack.url, "203.0.113.1", LIMIT + 1)).toEqual([...Array(LIMIT).fill(401), 429]);
    expect(await madeUpKeys(stack.url, "203.0.113.2", 1)).toEqual([401]);
  });

  it("counts an IPv6 client by its /64: another address of the same /64 shares its limits", async () => {
    const stack = await startStack({ RATE_LIMIT_PER_MINUTE: String(LIMIT), TRUSTED_PROXIES: "127.0.0.1/32" });
    stacks.push(stack);
    expect(await madeUpKeys(stack.url, "2001:db8:1:2::1", LIMIT)).toEqual(Array(LIMIT).fill(401));
    // The same host rotating through its /64 finds the refusals used up.
    expect(await madeUpKeys(stack.url, "2001:db8:1:2:ffff:ffff:ffff:fffe", 1)).toEqual([429]);
    // Another /64 is another client.
    expect(await madeUpKeys(stack.url, "2001:db8:1:3::1", 1)).toEqual([401]);

    // Log-in attempts (5 a minute per address) too: a new address of the /64 for each, and a
    // new email each time, so that only the address's count can refuse.
    const api = apiClient(stack.url);
    const statuses: number[] = [];
    for (let i = 1; i <= 6; i++) {
      const answer = await api.post(
        "/auth/login",
        { email: `nobody-${i}-${randomBytes(4).toString("hex")}@example.com`, password: "wrong password" },
        { headers: { "x-forwarded-for": `2001:db8:7:7:${i}::1` } },
      );
      statuses.push(answer.status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
  });
});

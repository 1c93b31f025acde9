import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { parseServiceTokenSecrets, verifyServiceToken } from "./service-tokens.js";

const CURRENT = "current-service-token-secret-0123456789";
const PREVIOUS = "previous-service-token-secret-0123456789";

describe("parseServiceTokenSecrets", () => {
  it("signs with the first secret and verifies with every one; refuses short or unnamed secrets", () => {
    const keys = parseServiceTokenSecrets(`k2:${CURRENT}, k1:${PREVIOUS}`);
    expect(keys.signing.kid).toBe("k2");
    expect([...keys.verifying.keys()]).toEqual(["k2", "k1"]);
    expect(() => parseServiceTokenSecrets("k1:short")).toThrow();
    expect(() => parseServiceTokenSecrets(CURRENT)).toThrow();
    expect(() => parseServiceTokenSecrets("")).toThrow();
  });
});

/** A token as a caller signs one (kit's client interceptor does the same). */
async function token(
  kid: string,
  secret: string,
  claims: Record<string, unknown> = {},
  exp = "60s",
  typ = "evalp-service+jwt",
) {
  const keys = parseServiceTokenSecrets(`${kid}:${secret}`);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256", typ, kid })
    .setIssuer("gateway")
    .setAudience("evalp-services")
    .setIssuedAt()
    .setExpirationTime(exp)
    .sign(keys.signing.key);
}

describe("verifyServiceToken", () => {
  const keys = parseServiceTokenSecrets(`k2:${CURRENT},k1:${PREVIOUS}`);

  it("accepts a token of the current or the previous secret, with its caller and actor", async () => {
    const act = { kind: "session", id: "user-1" };
    expect(await verifyServiceToken(await token("k2", CURRENT, { act }), keys)).toMatchObject({
      caller: "gateway",
      actor: act,
    });
    expect(await verifyServiceToken(await token("k1", PREVIOUS), keys)).toMatchObject({ actor: null });
  });

  it("refuses another cluster's secret, an unknown kid, a wrong type and an expired token", async () => {
    await expect(
      verifyServiceToken(await token("k2", "another-secret-0123456789-0123456789"), keys),
    ).rejects.toThrow();
    await expect(verifyServiceToken(await token("k3", CURRENT), keys)).rejects.toThrow();
    await expect(verifyServiceToken(await token("k2", CURRENT, {}, "60s", "JWT"), keys)).rejects.toThrow();
    await expect(verifyServiceToken(await token("k2", CURRENT, {}, "-1s"), keys)).rejects.toThrow();
  });
});

import { createPrivateKey, createPublicKey } from "node:crypto";
import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import {
  generateServiceKeySet,
  mintServiceToken,
  parseServiceKey,
  parseServicePublicKeys,
  type ServiceTokenVerifier,
  verifyServiceToken,
} from "./service-tokens.js";

const SET = generateServiceKeySet(["gateway", "webhooks"]);
const signer = (name: "gateway" | "webhooks") => ({ name, key: parseServiceKey(SET.private[name] ?? "") });
const control: ServiceTokenVerifier = { audience: "control", keys: parseServicePublicKeys(SET.public) };

describe("service keys", () => {
  it("read PEM or JWK, private keys where a process's own goes, public ones (a list while rotating) where every process's go", () => {
    const pem = SET.private.gateway ?? "";
    const jwk = JSON.stringify(createPrivateKey(pem).export({ format: "jwk" }));
    expect(parseServiceKey(jwk).kid).toBe(parseServiceKey(pem).kid);
    const publicJwk = createPublicKey(pem).export({ format: "jwk" });
    const next = generateServiceKeySet(["gateway"]);
    const rotating = parseServicePublicKeys(
      JSON.stringify({ gateway: [publicJwk, JSON.parse(next.public).gateway] }),
    );
    expect([...rotating.values()].map((entry) => entry.service)).toEqual(["gateway", "gateway"]);
    expect(() => parseServicePublicKeys(JSON.stringify({ gateway: pem }))).toThrow(/private key/);
    expect(() => parseServicePublicKeys("{}")).toThrow(/names no key/);
    expect(() => parseServicePublicKeys(JSON.stringify({ gateway: publicJwk, control: publicJwk }))).toThrow(
      /share a key/,
    );
    expect(() => parseServiceKey("k1:a-shared-secret-of-old-0123456789")).toThrow(/Ed25519/);
  });
});

describe("verifyServiceToken", () => {
  it("accepts a token its caller's key signed for this service, with the caller and actor", async () => {
    const act = { kind: "session", id: "user-1" };
    expect(
      await verifyServiceToken(await mintServiceToken(signer("gateway"), "control", act), control),
    ).toMatchObject({ caller: "gateway", actor: act });
    expect(
      await verifyServiceToken(await mintServiceToken(signer("webhooks"), "control"), control),
    ).toMatchObject({
      caller: "webhooks",
      actor: null,
    });
  });

  it("refuses a token for another service, of an unknown key, naming another caller than its key's, of another type or expired", async () => {
    await expect(
      verifyServiceToken(await mintServiceToken(signer("gateway"), "webhooks"), control),
    ).rejects.toThrow();
    const stranger = generateServiceKeySet(["gateway"]);
    const unknown = { name: "gateway", key: parseServiceKey(stranger.private.gateway ?? "") };
    await expect(verifyServiceToken(await mintServiceToken(unknown, "control"), control)).rejects.toThrow();
    // The webhooks key claiming to be the gateway.
    const webhooks = signer("webhooks");
    const forged = (claims: { iss: string; sub: string; typ?: string; exp?: string }) =>
      new SignJWT({})
        .setProtectedHeader({ alg: "EdDSA", typ: claims.typ ?? "evalp-service+jwt", kid: webhooks.key.kid })
        .setIssuer(claims.iss)
        .setSubject(claims.sub)
        .setAudience("control")
        .setIssuedAt()
        .setExpirationTime(claims.exp ?? "60s")
        .sign(webhooks.key.key);
    await expect(
      verifyServiceToken(await forged({ iss: "gateway", sub: "gateway" }), control),
    ).rejects.toThrow();
    await expect(
      verifyServiceToken(await forged({ iss: "webhooks", sub: "gateway" }), control),
    ).rejects.toThrow();
    await expect(
      verifyServiceToken(await forged({ iss: "webhooks", sub: "webhooks", typ: "JWT" }), control),
    ).rejects.toThrow();
    await expect(
      verifyServiceToken(await forged({ iss: "webhooks", sub: "webhooks", exp: "-1s" }), control),
    ).rejects.toThrow();
    expect(
      await verifyServiceToken(await forged({ iss: "webhooks", sub: "webhooks" }), control),
    ).toMatchObject({
      caller: "webhooks",
    });
  });
});

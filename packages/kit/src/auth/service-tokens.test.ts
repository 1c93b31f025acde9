import { createPrivateKey, createPublicKey } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { ApiKeyService } from "@evalp/proto/control/v1/api_key";
import { QuotaService } from "@evalp/proto/control/v1/quota";
import { SignJWT } from "jose";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { callerTable } from "./service-callers.js";
import {
  generateServiceKeySet,
  mintServiceToken,
  parseServiceKey,
  parseServicePublicKeys,
  requireServiceTokens,
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

describe("requireServiceTokens", () => {
  const lines: string[] = [];
  const logger = pino({ level: "warn" }, { write: (line: string) => void lines.push(line) });
  const interceptor = requireServiceTokens(
    control,
    callerTable({ gateway: [ApiKeyService, QuotaService], webhooks: [QuotaService.method.getLimits] }),
    logger,
  );
  /** Runs the interceptor on a call of `method` with `token`; resolves with the actor it let through. */
  const call = async (method: { parent: { typeName: string }; name: string }, token: string) => {
    const req = {
      header: new Headers({ authorization: `Bearer ${token}`, "x-evalp-actor-id": "forged" }),
      service: { typeName: method.parent.typeName },
      method: { name: method.name },
    };
    const next = async (passed: typeof req) => passed.header.get("x-evalp-actor-id");
    // Only the parts the interceptor reads of a request.
    return (interceptor as unknown as (n: typeof next) => (r: typeof req) => Promise<string | null>)(next)(
      req,
    );
  };
  const codeOf = (promise: Promise<unknown>) =>
    promise.then(
      () => null,
      (error: unknown) => (error instanceof ConnectError ? error.code : error),
    );

  it("lets a caller through to what its table grants, with the token's actor and none sent beside it", async () => {
    const token = await mintServiceToken(signer("gateway"), "control", { kind: "session", id: "user-1" });
    expect(await call(ApiKeyService.method.createApiKey, token)).toBe("user-1");
    expect(
      await call(QuotaService.method.getLimits, await mintServiceToken(signer("webhooks"), "control")),
    ).toBe(null);
  });

  it("refuses a caller the RPC is not granted to (PermissionDenied, logged), and a token for another service", async () => {
    const webhooks = await mintServiceToken(signer("webhooks"), "control");
    expect(await codeOf(call(ApiKeyService.method.createApiKey, webhooks))).toBe(Code.PermissionDenied);
    expect(await codeOf(call(QuotaService.method.updateQuotas, webhooks))).toBe(Code.PermissionDenied);
    expect(lines.map((line) => JSON.parse(line))).toContainEqual(
      expect.objectContaining({ caller: "webhooks", rpc: "evalp.control.v1.ApiKeyService/CreateApiKey" }),
    );
    const elsewhere = await mintServiceToken(signer("gateway"), "webhooks");
    expect(await codeOf(call(ApiKeyService.method.createApiKey, elsewhere))).toBe(Code.Unauthenticated);
  });
});

import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
} from "node:crypto";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { decodeProtectedHeader, jwtVerify, SignJWT } from "jose";
import type { Logger } from "pino";
import { ACTOR_ID_HEADER, ACTOR_KIND_HEADER, CALLER_HEADER } from "../rpc/request-context.js";
import type { CallerTable } from "./service-callers.js";

/**
 * Inside the cluster an address is no credential, and neither is being one of the platform's
 * processes: every call between them carries a short-lived token its caller signs with a key of
 * its own (Ed25519, `typ` evalp-service+jwt, `kid` the RFC 7638 thumbprint of the key), whose
 * `iss`/`sub` name the calling process and `aud` the called one. A service verifies it with the
 * callers' public keys (SERVICE_PUBLIC_KEYS), so a caller is who its key says, not what it
 * claims; the called service then checks that this caller may call this RPC (service-callers.ts).
 * Code running in one process can sign only as that process, and only for what that process may do.
 */
export type ServiceSigningKey = { kid: string; key: KeyObject };

/** The public keys a service verifies tokens with: each key's thumbprint → the process it belongs to. */
export type ServicePublicKeys = ReadonlyMap<string, { service: string; key: KeyObject }>;

/** What a service needs to check the tokens sent to it: its own name (the audience) and the callers' keys. */
export type ServiceTokenVerifier = { audience: string; keys: ServicePublicKeys };

/** A step of a call as an interceptor wraps it, and the call it is handed. */
type CallStep = Parameters<Interceptor>[0];
type CallRequest = Parameters<CallStep>[0];

/** What a verified token says. */
export type ServiceClaims = { caller: string; actor: { kind: string; id: string } | null };

/** The processes that call or serve RPCs, each with a key pair of its own. */
export const SERVICE_NAMES = ["gateway", "control", "platform", "interview", "webhooks"] as const;

const TYP = "evalp-service+jwt";
const ALG = "EdDSA";
/** A token lives a minute; a caller reuses one for half of that. */
const LIFETIME_SECONDS = 60;
const REUSE_MS = 30_000;
/** Tokens remembered per caller (one per actor) and verifications per service, at most. */
const MAX_REMEMBERED = 10_000;

/** The RFC 7638 thumbprint of an Ed25519 public key: the `kid` its tokens carry. */
function thumbprint(publicKey: KeyObject): string {
  const jwk = publicKey.export({ format: "jwk" });
  return createHash("sha256")
    .update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x }))
    .digest("base64url");
}

/** A key as settings give it: PEM (PKCS#8 / SPKI) or a JWK, as text or (a JWK) already parsed. */
function keyInput(value: unknown) {
  if (typeof value === "string") {
    const text = value.trim();
    return text.startsWith("{")
      ? { key: JSON.parse(text) as Record<string, unknown>, format: "jwk" as const }
      : text;
  }
  if (value && typeof value === "object" && !Array.isArray(value)) {
    return { key: value as Record<string, unknown>, format: "jwk" as const };
  }
  throw new Error("a key is a PEM or a JWK");
}

function ed25519(key: KeyObject): KeyObject {
  if (key.asymmetricKeyType !== "ed25519") throw new Error("service keys are Ed25519 keys");
  return key;
}

/** Reads a process's private key (SERVICE_KEY: a PKCS#8 PEM or a private JWK). */
export function parseServiceKey(value: string): ServiceSigningKey {
  let key: KeyObject;
  try {
    key = ed25519(createPrivateKey(keyInput(value)));
  } catch (error) {
    throw new Error(
      `SERVICE_KEY is not an Ed25519 private key (PKCS#8 PEM or JWK): ${(error as Error).message}`,
    );
  }
  return { kid: thumbprint(createPublicKey(key)), key };
}

/**
 * Reads SERVICE_PUBLIC_KEYS: a JSON object naming each process's public key, as an SPKI PEM or
 * a public JWK, or a list of them while one is rotated: `{"gateway": "-----BEGIN PUBLIC KEY-----…",
 * "control": [{"kty":"OKP",…}, …]}`. A private key is refused: this setting is given to every process.
 */
export function parseServicePublicKeys(value: string): ServicePublicKeys {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new Error('SERVICE_PUBLIC_KEYS must be a JSON object: {"<process>": <key or list of keys>}');
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new Error('SERVICE_PUBLIC_KEYS must be a JSON object: {"<process>": <key or list of keys>}');
  }
  const keys = new Map<string, { service: string; key: KeyObject }>();
  for (const [service, listed] of Object.entries(parsed)) {
    for (const one of Array.isArray(listed) ? listed : [listed]) {
      const input = keyInput(one);
      if (typeof input === "string" ? input.includes("PRIVATE KEY") : "d" in input.key) {
        throw new Error(`SERVICE_PUBLIC_KEYS.${service} holds a private key: give its public key`);
      }
      let key: KeyObject;
      try {
        key = ed25519(createPublicKey(input));
      } catch (error) {
        throw new Error(`SERVICE_PUBLIC_KEYS.${service}: ${(error as Error).message}`);
      }
      const kid = thumbprint(key);
      const held = keys.get(kid);
      if (held && held.service !== service) {
        throw new Error(`SERVICE_PUBLIC_KEYS: ${held.service} and ${service} share a key`);
      }
      keys.set(kid, { service, key });
    }
  }
  if (keys.size === 0) throw new Error("SERVICE_PUBLIC_KEYS names no key");
  return keys;
}

/** A set of key pairs, one per process: what development and the tests make at start (never committed). */
export type ServiceKeySet = {
  /** Each process's private key, a PKCS#8 PEM (its SERVICE_KEY). */
  private: Record<string, string>;
  /** Every process's public key (SERVICE_PUBLIC_KEYS). */
  public: string;
};

/** Generates a key pair for each of `names`. */
export function generateServiceKeySet(names: readonly string[] = SERVICE_NAMES): ServiceKeySet {
  const privates: Record<string, string> = {};
  const publics: Record<string, string> = {};
  for (const name of names) {
    const pair = generateKeyPairSync("ed25519", {
      privateKeyEncoding: { type: "pkcs8", format: "pem" },
      publicKeyEncoding: { type: "spki", format: "pem" },
    });
    privates[name] = pair.privateKey;
    publics[name] = pair.publicKey;
  }
  return { private: privates, public: JSON.stringify(publics) };
}

/** Forgets everything once full: a bounded memory, refilled at the next calls. */
function bounded<V>(map: Map<string, V>): Map<string, V> {
  if (map.size >= MAX_REMEMBERED) map.clear();
  return map;
}

/**
 * Signs one service token (a minute long) from `caller` to `audience`, for `actor` or for no one:
 * what the clients' interceptor sends, and what an operator's grpcurl or buf curl sends by hand.
 */
export function mintServiceToken(
  caller: { name: string; key: ServiceSigningKey },
  audience: string,
  actor: { kind: string; id: string } | null = null,
): Promise<string> {
  return new SignJWT(actor ? { act: actor } : {})
    .setProtectedHeader({ alg: ALG, typ: TYP, kid: caller.key.kid })
    .setIssuer(caller.name)
    .setSubject(caller.name)
    .setAudience(audience)
    .setIssuedAt()
    .setExpirationTime(`${LIFETIME_SECONDS}s`)
    .sign(caller.key.key);
}

/**
 * Client interceptor: signs a token to `audience` for the call's actor (the `x-evalp-actor-*`
 * metadata the caller set, which does not travel in the clear any more) and sends it as
 * `authorization`. A token is reused for half its life: signing is off the hot path.
 */
export function signServiceTokens(
  caller: { name: string; key: ServiceSigningKey },
  audience: string,
): Interceptor {
  const tokens = new Map<string, { token: string; until: number }>();
  return (next) => (req) => {
    const kind = req.header.get(ACTOR_KIND_HEADER);
    const id = req.header.get(ACTOR_ID_HEADER);
    req.header.delete(ACTOR_KIND_HEADER);
    req.header.delete(ACTOR_ID_HEADER);
    const cacheKey = `${kind ?? ""}\n${id ?? ""}`;
    const held = tokens.get(cacheKey);
    // A reused token goes on at once: no promise or turn of the event loop on a call's way out.
    if (held && held.until > Date.now()) {
      req.header.set("authorization", `Bearer ${held.token}`);
      return next(req);
    }
    return mintServiceToken(caller, audience, kind && id ? { kind, id } : null).then((token) => {
      bounded(tokens).set(cacheKey, { token, until: Date.now() + REUSE_MS });
      req.header.set("authorization", `Bearer ${token}`);
      return next(req);
    });
  };
}

/**
 * Verifies a service token; throws when it is signed by no known key, is for another service,
 * names another caller than its key's, is expired or altered.
 */
export async function verifyServiceToken(
  token: string,
  verifier: ServiceTokenVerifier,
): Promise<ServiceClaims & { exp: number }> {
  const { kid, typ } = decodeProtectedHeader(token);
  const known = typeof kid === "string" ? verifier.keys.get(kid) : undefined;
  if (!known || typ !== TYP) throw new Error("not a service token of this cluster");
  const { payload } = await jwtVerify(token, known.key, {
    algorithms: [ALG],
    audience: verifier.audience,
    // The caller is the key's owner: a token naming another process is not one.
    issuer: known.service,
    subject: known.service,
    typ: TYP,
    requiredClaims: ["exp"],
  });
  const act = payload.act as { kind?: unknown; id?: unknown } | undefined;
  const actor =
    act && typeof act.kind === "string" && typeof act.id === "string" ? { kind: act.kind, id: act.id } : null;
  if (typeof payload.exp !== "number") throw new Error("incomplete service token");
  return { caller: known.service, actor, exp: payload.exp };
}

/**
 * Server interceptor, outermost: refuses a call without a valid service token for this service
 * (Unauthenticated), then a caller the service's table does not allow for the RPC
 * (PermissionDenied, logged), and sets the actor metadata from the token, whatever the call sent
 * beside it. Verified tokens are remembered until they expire, so a caller's reused token costs
 * one map lookup after its first call.
 */
export function requireServiceTokens(
  verifier: ServiceTokenVerifier,
  callers: CallerTable,
  logger?: Logger,
): Interceptor {
  const verified = new Map<string, ServiceClaims & { exp: number }>();
  return (next) => (req) => {
    const token = /^Bearer (\S+)$/.exec(req.header.get("authorization") ?? "")?.[1];
    if (!token) return Promise.reject(new ConnectError("a service token is required", Code.Unauthenticated));
    const claims = verified.get(token);
    // A token already verified (a caller's reused one) is checked at once, without a promise.
    if (claims && claims.exp * 1000 > Date.now()) return admit(req, claims, next);
    return verifyServiceToken(token, verifier).then(
      (fresh) => {
        bounded(verified).set(token, fresh);
        return admit(req, fresh, next);
      },
      () => {
        throw new ConnectError("the service token is not valid", Code.Unauthenticated);
      },
    );
  };

  /** The call let through with its verified claims, if the table allows its caller. */
  function admit(req: CallRequest, claims: ServiceClaims, next: CallStep): ReturnType<CallStep> {
    if (!callers.allows(req.service.typeName, req.method.name, claims.caller)) {
      logger?.warn(
        { caller: claims.caller, rpc: `${req.service.typeName}/${req.method.name}` },
        "rpc refused: this caller may not call it",
      );
      return Promise.reject(
        new ConnectError(`${claims.caller} may not call this RPC`, Code.PermissionDenied),
      );
    }
    req.header.delete(ACTOR_KIND_HEADER);
    req.header.delete(ACTOR_ID_HEADER);
    req.header.set(CALLER_HEADER, claims.caller);
    if (claims.actor) {
      req.header.set(ACTOR_KIND_HEADER, claims.actor.kind);
      req.header.set(ACTOR_ID_HEADER, claims.actor.id);
    }
    return next(req);
  }
}

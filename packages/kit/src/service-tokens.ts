import { createHmac } from "node:crypto";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { decodeProtectedHeader, jwtVerify, SignJWT } from "jose";
import { ACTOR_ID_HEADER, ACTOR_KIND_HEADER } from "./request-context.js";

/**
 * Inside the cluster an address is no credential: every call between the platform's processes
 * carries a short-lived token the caller signs (HS256, `typ` evalp-service+jwt, `kid` naming
 * the secret) that says which process calls and for whom (the actor). A service refuses a call
 * without a valid one, and takes the actor from the token alone. Secrets come from
 * SERVICE_TOKEN_SECRETS: `kid:secret` pairs, the first signs, every one verifies, so a secret is
 * rotated by adding the new one first, rolling every process, then dropping the old.
 */
export type ServiceTokenKeys = {
  signing: { kid: string; key: Uint8Array };
  verifying: ReadonlyMap<string, Uint8Array>;
};

/** What a verified token says. */
export type ServiceClaims = { caller: string; actor: { kind: string; id: string } | null };

const TYP = "evalp-service+jwt";
const AUDIENCE = "evalp-services";
/** A token lives a minute; a caller reuses one for half of that. */
const LIFETIME_SECONDS = 60;
const REUSE_MS = 30_000;
/** Tokens remembered per caller (one per actor) and verifications per service, at most. */
const MAX_REMEMBERED = 10_000;

/** The key of one secret, derived for this one use (the same secret signs nothing else). */
function keyOf(secret: string): Uint8Array {
  return createHmac("sha256", secret).update("evalp service tokens v1").digest();
}

/** Reads SERVICE_TOKEN_SECRETS (`kid:secret,kid:secret`, secrets of 32 characters or more). */
export function parseServiceTokenSecrets(value: string): ServiceTokenKeys {
  const pairs = value
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part.length > 0)
    .map((part) => {
      const at = part.indexOf(":");
      const kid = part.slice(0, at);
      const secret = part.slice(at + 1);
      if (at < 1 || !/^[A-Za-z0-9_-]{1,32}$/.test(kid) || secret.length < 32) {
        throw new Error("SERVICE_TOKEN_SECRETS entries must be <kid>:<secret of 32+ characters>");
      }
      return { kid, key: keyOf(secret) };
    });
  const [signing] = pairs;
  if (!signing) throw new Error("SERVICE_TOKEN_SECRETS is required: <kid>:<secret> pairs, the first signs");
  return { signing, verifying: new Map(pairs.map((pair) => [pair.kid, pair.key])) };
}

/** Forgets everything once full: a bounded memory, refilled at the next calls. */
function bounded<V>(map: Map<string, V>): Map<string, V> {
  if (map.size >= MAX_REMEMBERED) map.clear();
  return map;
}

/**
 * Signs one service token (a minute long) as `caller`, for `actor` or for no one: what the
 * clients' interceptor sends, and what an operator's grpcurl or buf curl sends by hand.
 */
export function mintServiceToken(
  caller: string,
  keys: ServiceTokenKeys,
  actor: { kind: string; id: string } | null = null,
): Promise<string> {
  return new SignJWT(actor ? { act: actor } : {})
    .setProtectedHeader({ alg: "HS256", typ: TYP, kid: keys.signing.kid })
    .setIssuer(caller)
    .setAudience(AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(`${LIFETIME_SECONDS}s`)
    .sign(keys.signing.key);
}

/**
 * Client interceptor: signs a token for the call's actor (the `x-evalp-actor-*` metadata the
 * caller set, which does not travel in the clear any more) and sends it as `authorization`.
 */
export function signServiceTokens(caller: string, keys: ServiceTokenKeys): Interceptor {
  const tokens = new Map<string, { token: string; until: number }>();
  const tokenFor = async (kind: string | null, id: string | null) => {
    const cacheKey = `${kind ?? ""}\n${id ?? ""}`;
    const held = tokens.get(cacheKey);
    if (held && held.until > Date.now()) return held.token;
    const token = await mintServiceToken(caller, keys, kind && id ? { kind, id } : null);
    bounded(tokens).set(cacheKey, { token, until: Date.now() + REUSE_MS });
    return token;
  };
  return (next) => async (req) => {
    const kind = req.header.get(ACTOR_KIND_HEADER);
    const id = req.header.get(ACTOR_ID_HEADER);
    req.header.delete(ACTOR_KIND_HEADER);
    req.header.delete(ACTOR_ID_HEADER);
    req.header.set("authorization", `Bearer ${await tokenFor(kind, id)}`);
    return next(req);
  };
}

/** Verifies a service token; throws when it is not one of ours, expired or altered. */
export async function verifyServiceToken(
  token: string,
  keys: ServiceTokenKeys,
): Promise<ServiceClaims & { exp: number }> {
  const { kid, typ } = decodeProtectedHeader(token);
  const key = typeof kid === "string" ? keys.verifying.get(kid) : undefined;
  if (!key || typ !== TYP) throw new Error("not a service token of this cluster");
  const { payload } = await jwtVerify(token, key, { algorithms: ["HS256"], audience: AUDIENCE, typ: TYP });
  const act = payload.act as { kind?: unknown; id?: unknown } | undefined;
  const actor =
    act && typeof act.kind === "string" && typeof act.id === "string" ? { kind: act.kind, id: act.id } : null;
  if (typeof payload.iss !== "string" || typeof payload.exp !== "number")
    throw new Error("incomplete service token");
  return { caller: payload.iss, actor, exp: payload.exp };
}

/**
 * Server interceptor, outermost: refuses a call without a valid service token (Unauthenticated),
 * and sets the actor metadata from the token, whatever the call sent beside it. Verified tokens
 * are remembered until they expire, so a caller's reused token is checked once.
 */
export function requireServiceTokens(keys: ServiceTokenKeys): Interceptor {
  const verified = new Map<string, ServiceClaims & { exp: number }>();
  return (next) => async (req) => {
    const token = /^Bearer (\S+)$/.exec(req.header.get("authorization") ?? "")?.[1];
    if (!token) throw new ConnectError("a service token is required", Code.Unauthenticated);
    let claims = verified.get(token);
    if (!claims || claims.exp * 1000 <= Date.now()) {
      claims = await verifyServiceToken(token, keys).catch(() => {
        throw new ConnectError("the service token is not valid", Code.Unauthenticated);
      });
      bounded(verified).set(token, claims);
    }
    req.header.delete(ACTOR_KIND_HEADER);
    req.header.delete(ACTOR_ID_HEADER);
    if (claims.actor) {
      req.header.set(ACTOR_KIND_HEADER, claims.actor.kind);
      req.header.set(ACTOR_ID_HEADER, claims.actor.id);
    }
    return next(req);
  };
}

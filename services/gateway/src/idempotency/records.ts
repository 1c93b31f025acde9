import { hash } from "node:crypto";
import type { FastifyRequest } from "fastify";
import type { Identity } from "../admission/credentials.js";
import { keyClaims, redisKeys } from "../admission/round-trip.js";
import type { RedisClient } from "../redis.js";

// An Idempotency-Key in Redis (docs/idempotency.md): whose it is, where it lives, and how its
// answer is stored. The admission step claims it (admission/round-trip.ts); the idempotency
// check (admission/checks.ts) answers from the claim and finishes it here.

const HEADER = "idempotency-key";
const MAX_KEY_LENGTH = 255;

/** The Redis identity of one key in its scope (docs/idempotency.md: caller, method, route). */
export function idempotencyId(scope: string, method: string, route: string, key: string): string {
  return hash("sha256", `${scope}\n${method}\n${route}\n${key}`, "hex");
}

/**
 * The scope of an operator's keys: the caller (an API key, or a signed-in user: the principal's
 * kind and id) in the organization it acts in. Another credential of the same organization that
 * sends the same key and body makes another request, and never sees this caller's answer (which
 * can hold a secret that only this caller may read).
 */
export function operatorScope(kind: string, principalId: string, organizationId: string | null): string {
  return `${kind}:${principalId}@${organizationId ?? ""}`;
}

/**
 * Whom a key belongs to: the participant session, the operator (`operatorScope`), an anonymous
 * caller by its address, so that one client's keys never meet another's.
 */
function keyScope(request: FastifyRequest, identity: Identity): string {
  if (identity.kind === "participant") return `participant:${identity.participant.sessionId}`;
  if (identity.kind === "operator" && identity.access) {
    const { principal, organizationId } = identity.access;
    return operatorScope(principal.kind, principal.principalId, organizationId);
  }
  return `anonymous:${request.ip}`;
}

/** Where a key lives in Redis: its id, its record and its in-flight lock. */
export type KeyTarget = { id: string; recordKey: string; lockKey: string };

/**
 * Where the Idempotency-Key of a request lives in Redis, if it carries one that its route
 * honours, for the caller `identity` names.
 */
export function keyTarget(
  request: FastifyRequest,
  prefix: string,
  identity: Identity,
): KeyTarget | undefined {
  const mode = request.routeOptions.config.access?.idempotency ?? "none";
  const key = request.headers[HEADER];
  if (mode === "none" || typeof key !== "string" || key.length === 0 || key.length > MAX_KEY_LENGTH)
    return undefined;
  const scope = keyScope(request, identity);
  const id = idempotencyId(scope, request.method, request.routeOptions.url ?? request.url, key);
  const keys = redisKeys(prefix);
  return { id, recordKey: keys.idempotencyRecord(id), lockKey: keys.idempotencyLock(id) };
}

/**
 * The answer stored (when there is one to keep) and the lock released, in one command, by the
 * lock's owner only: a run whose lock expired (and which another run may hold now) neither
 * deletes that run's lock nor writes over its record; it returns 0. A `MULTI` … `EXEC` is four
 * commands, and ioredis sends a transaction on a write of its own, where a script joins the
 * commands other requests issue in the same turn of the event loop.
 * KEYS record and lock; ARGV the sealed answer ('' for none), its lifetime in s, the owner.
 */
const FINISH = `
if redis.call('GET', KEYS[2]) ~= ARGV[3] then return 0 end
if ARGV[1] ~= '' then redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2]) end
redis.call('DEL', KEYS[2])
return 1
`;

type RecordsRedis = RedisClient & {
  idempotencyFinish(
    recordKey: string,
    lockKey: string,
    sealed: string,
    ttlSeconds: number,
    owner: string,
  ): Promise<number>;
};

/** Claims idempotency keys and stores their answers on `redis` (one definition of each script per client). */
export function idempotencyRecords(redis: RedisClient) {
  const client = redis as RecordsRedis;
  if (typeof client.idempotencyFinish !== "function")
    client.defineCommand("idempotencyFinish", { numberOfKeys: 2, lua: FINISH });
  const { claim } = keyClaims(redis);
  return {
    claim,
    /**
     * Stores `sealed` for `ttlSeconds` (nothing when null) and releases the lock, if `owner` still
     * holds it; resolves false (nothing done) when it no longer does.
     */
    async finish(
      recordKey: string,
      lockKey: string,
      owner: string,
      sealed: string | null,
      ttlSeconds: number,
    ): Promise<boolean> {
      return (await client.idempotencyFinish(recordKey, lockKey, sealed ?? "", ttlSeconds, owner)) === 1;
    },
  };
}

import { hash } from "node:crypto";
import type { FastifyRequest } from "fastify";
import type { Identity } from "../admission/credentials.js";
import { redisKeys } from "../redis-keys.js";

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

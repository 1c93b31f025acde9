/**
 * The gateway's Redis keys, named in one place. Keys a script touches together carry the same hash
 * tag (the part in braces, which alone decides a key's slot on Redis Cluster), so that the script
 * runs on one node: an address's window and its refusals (`{ip:…}`), an Idempotency-Key's record
 * and its lock (`{idem:…}`). A credential's window has a tag of its own: on a Cluster the
 * admission script runs in parts (admission/round-trip.ts). The prefix (REDIS_KEY_PREFIX) must hold no
 * brace, or its braces would be the tag.
 */
export function redisKeys(prefix: string) {
  return {
    /** An address's rate-limit window (its /64 for IPv6, as admission/client-address.ts keys it). */
    addressWindow: (address: string) => `${prefix}rl:ip:{ip:${address}}`,
    /** An address's refused credentials, counted in the same slot as its window. */
    addressRefusals: (address: string) => `${prefix}rl:refused:{ip:${address}}`,
    /** A proven credential's rate-limit window, by the credential's hash. */
    credentialWindow: (credentialHash: string) => `${prefix}rl:cred:{cred:${credentialHash}}`,
    /** An Idempotency-Key's stored answer. */
    idempotencyRecord: (id: string) => `${prefix}idem:rec:{idem:${id}}`,
    /** An Idempotency-Key's in-flight lock, in the same slot as its record. */
    idempotencyLock: (id: string) => `${prefix}idem:lock:{idem:${id}}`,
    /** A participant session's open sockets. */
    sessionSockets: (sessionId: string) => `${prefix}sockets:session:${sessionId}`,
    /** An address's open participant sockets. */
    addressSockets: (address: string) => `${prefix}sockets:address:${address}`,
  };
}

export type RedisKeys = ReturnType<typeof redisKeys>;

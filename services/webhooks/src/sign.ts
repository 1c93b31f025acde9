import { createHmac, createSecretKey, type KeyObject } from "node:crypto";

/** The prefix of a signing secret (docs/webhooks.md); the rest is the base64 of its key. */
const SECRET_PREFIX = "whsec_";

/** Keys by secret; a secret's decoded key is kept rather than decoded at every attempt. */
const keys = new Map<string, KeyObject>();
const MAX_KEYS = 10_000;

function keyOf(secret: string): KeyObject {
  let found = keys.get(secret);
  if (!found) {
    if (keys.size >= MAX_KEYS) keys.clear();
    const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
    found = createSecretKey(Buffer.from(encoded, "base64"));
    keys.set(secret, found);
  }
  return found;
}

/**
 * The `webhook-signature` header of docs/webhooks.md (Standard Webhooks): `v1,<base64
 * HMAC-SHA256 of id.timestamp.body>` per secret, space-separated while a rotation's previous
 * secret still signs. Node's own HMAC rather than the `standardwebhooks` library's JavaScript
 * SHA-256, which cost an attempt several times as much; the tests verify with the library.
 */
export function signatureHeader(secrets: readonly string[], eventId: string, at: Date, body: string): string {
  const signed = `${eventId}.${Math.floor(at.getTime() / 1000)}.${body}`;
  return secrets
    .map((secret) => `v1,${createHmac("sha256", keyOf(secret)).update(signed).digest("base64")}`)
    .join(" ");
}

/** The headers of one attempt: the Standard Webhooks three and the JSON content type. */
export function deliveryHeaders(secrets: readonly string[], eventId: string, at: Date, body: string) {
  return {
    "content-type": "application/json",
    "user-agent": "evalp-webhooks/1",
    "webhook-id": eventId,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": signatureHeader(secrets, eventId, at, body),
  };
}

import { Webhook } from "standardwebhooks";

/** Signers by secret; a secret's decoded key is kept rather than decoded at every attempt. */
const signers = new Map<string, Webhook>();
const MAX_SIGNERS = 10_000;

function signer(secret: string): Webhook {
  let found = signers.get(secret);
  if (!found) {
    if (signers.size >= MAX_SIGNERS) signers.clear();
    found = new Webhook(secret);
    signers.set(secret, found);
  }
  return found;
}

/**
 * The `webhook-signature` header of docs/webhooks.md, computed by the `standardwebhooks` library
 * itself: `v1,<base64 HMAC-SHA256>` per secret, space-separated while a rotation's previous
 * secret still signs.
 */
export function signatureHeader(secrets: readonly string[], eventId: string, at: Date, body: string): string {
  return secrets.map((secret) => signer(secret).sign(eventId, at, body)).join(" ");
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

import { createHmac, randomBytes } from "node:crypto";

/** How long the local receiver may take to answer, as a webhook endpoint may (docs/webhooks.md). */
const FORWARD_TIMEOUT_MS = 10_000;

/** A fresh signing secret as endpoints have them: `whsec_` and base64 of 32 random bytes. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/** Whether `secret` is a signing secret the platform would take (`whsec_` + base64 of 24-64 bytes). */
export function isSigningSecret(secret: string): boolean {
  if (!/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(secret)) return false;
  const bytes = Buffer.from(secret.slice("whsec_".length), "base64").length;
  return bytes >= 24 && bytes <= 64;
}

/**
 * The Standard Webhooks headers of a delivery of `body` (docs/webhooks.md): `webhook-id` the
 * event's id, `webhook-timestamp` in unix seconds, `webhook-signature` `v1,` and the base64
 * HMAC-SHA256 of `id.timestamp.body` under the secret's key (its base64 after `whsec_`).
 */
export function signatureHeaders(
  secret: string,
  eventId: string,
  body: string,
  now: Date = new Date(),
): Record<string, string> {
  const timestamp = String(Math.floor(now.getTime() / 1000));
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  const signature = createHmac("sha256", key).update(`${eventId}.${timestamp}.${body}`).digest("base64");
  return {
    "content-type": "application/json",
    "webhook-id": eventId,
    "webhook-timestamp": timestamp,
    "webhook-signature": `v1,${signature}`,
  };
}

/** What became of one forwarded event: the receiver's status, or why it got none. */
export type Forwarded = { status: number } | { error: string };

/**
 * POSTs an event's body to `url` exactly as a webhook endpoint receives it: the same bytes,
 * signed with `secret`; redirects are not followed, and the receiver has 10 s to answer.
 */
export async function forwardEvent(
  url: string,
  secret: string,
  eventId: string,
  body: string,
  fetchImpl: typeof fetch = fetch,
): Promise<Forwarded> {
  try {
    const response = await fetchImpl(url, {
      method: "POST",
      headers: { ...signatureHeaders(secret, eventId, body), "user-agent": "evalp-cli" },
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
    // The body is not read, but must be let go of for the connection to be reused.
    await response.body?.cancel();
    return { status: response.status };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    if (error instanceof DOMException && error.name === "TimeoutError") {
      return { error: `timeout after ${FORWARD_TIMEOUT_MS} ms` };
    }
    return {
      error: cause?.code === "ECONNREFUSED" ? "connection refused" : String((error as Error).message),
    };
  }
}

import type { WebhookEvent } from "./types.js";

/** Request headers as Node (`IncomingHttpHeaders`) or `fetch` (`Headers`) hand them over. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

/** A webhook request that is not a correctly signed, recent delivery of the endpoint's secret. */
export class WebhookVerificationError extends Error {
  override name = "WebhookVerificationError";
}

/** How far a delivery's `webhook-timestamp` may be from now, either way (Standard Webhooks). */
const TOLERANCE_SECONDS = 5 * 60;
const SECRET_PREFIX = "whsec_";

/**
 * The event a webhook request carries, once its Standard Webhooks signature (docs/webhooks.md)
 * checks out against the endpoint's `whsec_…` secret: `webhook-signature` holds a valid HMAC-SHA256
 * of `webhook-id`, `webhook-timestamp` and the body exactly as received (any one of its
 * space-separated `v1,` signatures, so both secrets verify during a rotation), and the timestamp
 * is within five minutes of now. Anything else rejects with `WebhookVerificationError`.
 *
 * Written on Web Crypto alone (no Node `Buffer`), so it runs in Node, Deno, Bun, browsers and
 * edge runtimes alike; Web Crypto only verifies asynchronously, hence the promise.
 */
export async function verifyWebhook(
  secret: string,
  headers: WebhookHeaders,
  rawBody: string | Uint8Array,
  now: Date = new Date(),
): Promise<WebhookEvent> {
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError("missing required headers");
  const sentAt = /^\d+$/.test(timestamp) ? Number(timestamp) : Number.NaN;
  if (Number.isNaN(sentAt)) throw new WebhookVerificationError("invalid webhook-timestamp");
  const age = Math.floor(now.getTime() / 1000) - sentAt;
  if (age > TOLERANCE_SECONDS) throw new WebhookVerificationError("message timestamp too old");
  if (age < -TOLERANCE_SECONDS) throw new WebhookVerificationError("message timestamp too new");

  const body = typeof rawBody === "string" ? new TextEncoder().encode(rawBody) : rawBody;
  const prefix = new TextEncoder().encode(`${id}.${timestamp}.`);
  const signed = new Uint8Array(prefix.length + body.length);
  signed.set(prefix);
  signed.set(body, prefix.length);

  const key = await crypto.subtle.importKey(
    "raw",
    secretBytes(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["verify"],
  );
  for (const candidate of signatures.split(" ")) {
    const [version, value] = candidate.split(",", 2);
    if (version !== "v1" || value === undefined) continue;
    const signature = base64Bytes(value);
    // crypto.subtle.verify compares in constant time.
    if (signature && (await crypto.subtle.verify("HMAC", key, signature, signed))) {
      return JSON.parse(new TextDecoder().decode(body)) as WebhookEvent;
    }
  }
  throw new WebhookVerificationError("no matching signature found");
}

/** The key bytes of a `whsec_<base64>` secret (the prefix is optional, as Standard Webhooks says). */
function secretBytes(secret: string): Uint8Array<ArrayBuffer> {
  const bytes = base64Bytes(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret);
  if (!bytes || bytes.length === 0) throw new WebhookVerificationError("the secret is not base64");
  return bytes;
}

function base64Bytes(value: string): Uint8Array<ArrayBuffer> | undefined {
  try {
    return Uint8Array.from(atob(value), (char) => char.charCodeAt(0));
  } catch {
    return undefined;
  }
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const value = headers[name] ?? Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value.join(" ") : value;
}

import { Webhook } from "standardwebhooks";
import type { WebhookEvent } from "./types.js";

export { WebhookVerificationError } from "standardwebhooks";

/** Request headers as Node (`IncomingHttpHeaders`) or `fetch` (`Headers`) hand them over. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

const SIGNED = ["webhook-id", "webhook-timestamp", "webhook-signature"] as const;

/**
 * The event a webhook request carries, once its Standard Webhooks signature (docs/webhooks.md) checks
 * out against the endpoint's `whsec_…` secret: `webhook-signature` holds a valid HMAC of
 * `webhook-id`, `webhook-timestamp` and the body exactly as received (any one of its
 * space-separated signatures, so both secrets verify during a rotation), and the timestamp is
 * within five minutes of now. Anything else throws `WebhookVerificationError`.
 */
export function verifyWebhook(
  secret: string,
  headers: WebhookHeaders,
  rawBody: string | Uint8Array,
): WebhookEvent {
  const signed: Record<string, string> = {};
  for (const name of SIGNED) {
    const value = headers instanceof Headers ? headers.get(name) : headerValue(headers, name);
    if (value !== undefined && value !== null) signed[name] = value;
  }
  const body = typeof rawBody === "string" ? rawBody : Buffer.from(rawBody);
  return new Webhook(secret).verify(body, signed) as WebhookEvent;
}

function headerValue(
  headers: Record<string, string | string[] | undefined>,
  name: string,
): string | undefined {
  const value = headers[name] ?? Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value.join(" ") : value;
}

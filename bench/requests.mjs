// What the cases send: autocannon targets whose every request is new (a fresh import, a freshly
// signed event), and the clock the receiver shares for C2's latency.
import { randomUUID } from "node:crypto";
import { Webhook } from "standardwebhooks";

/** Milliseconds on `performance.timeOrigin + now()`, the clock bench/servers.mjs's receiver stamps arrivals with. */
export const now = () => performance.timeOrigin + performance.now();

/** The body of a one-subject import. */
export const importBody = (externalId) =>
  JSON.stringify({ items: [{ external_id: externalId, identity_mode: "anonymous", profile: {} }] });

/** A one-subject import with a fresh Idempotency-Key (so a fresh subject and event) each time. */
export function freshImports(url, apiKey) {
  return {
    url,
    method: "POST",
    headers: { "x-api-key": apiKey, "content-type": "application/json" },
    body: importBody("placeholder"),
    setupRequest: (request, context) => {
      const key = randomUUID();
      if (context) context.sentAt = now();
      return {
        ...request,
        headers: { ...request.headers, "idempotency-key": key },
        body: importBody(`c-${key}`),
      };
    },
  };
}

/** What a sender does without the platform: sign each event body (Standard Webhooks) and POST it. */
export function signedPosts(url, secret) {
  const signer = new Webhook(secret);
  const body = (id) =>
    JSON.stringify({
      id,
      type: "subject.imported",
      timestamp: new Date().toISOString(),
      environment_id: randomUUID(),
      data: { batch_id: randomUUID(), items: 1, imported: 1, failed: 0, subject_ids: [randomUUID()] },
    });
  return {
    url,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: body(randomUUID()),
    setupRequest: (request) => {
      const id = randomUUID();
      const payload = body(id);
      const at = new Date();
      return {
        ...request,
        headers: {
          ...request.headers,
          "webhook-id": id,
          "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
          "webhook-signature": signer.sign(id, at, payload),
        },
        body: payload,
      };
    },
  };
}

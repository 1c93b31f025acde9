#!/usr/bin/env node
// Usage: WEBHOOK_SECRET=whsec_… [PORT=3000] [HOST=127.0.0.1] node examples/webhook-receiver/receiver.mjs
// Receives the platform's webhooks: verifies each request's Standard Webhooks signature against
// the endpoint's secret (400 when it does not verify), answers 204 at once, and prints one JSON
// line per event; an event seen before (delivery is at least once) is acknowledged, not handled twice.
import { createServer } from "node:http";
import { Webhook, WebhookVerificationError } from "standardwebhooks";

const { WEBHOOK_SECRET: secret, PORT = "3000", HOST = "127.0.0.1" } = process.env;
if (!secret?.startsWith("whsec_")) {
  console.error("WEBHOOK_SECRET must be the endpoint's secret (whsec_…)");
  process.exit(2);
}
const webhook = new Webhook(secret);
// Event ids already handled. A real receiver keeps them in its database, beside what it did.
const seen = new Set();

async function rawBody(request) {
  const chunks = [];
  for await (const chunk of request) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

const server = createServer(async (request, response) => {
  if (request.method !== "POST") {
    response.writeHead(405, { allow: "POST" }).end();
    return;
  }
  // The signature covers the body exactly as sent: verify the raw text, never a re-serialized object.
  const body = await rawBody(request);
  let event;
  try {
    event = webhook.verify(body, request.headers);
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error;
    console.error(`rejected: ${error.message}`);
    response.writeHead(400, { "content-type": "text/plain" }).end("invalid signature\n");
    return;
  }
  const duplicate = seen.has(event.id);
  seen.add(event.id);
  // Acknowledge first, work afterwards: a slow answer (over 10 s) counts as a failed attempt.
  response.writeHead(204).end();
  console.log(JSON.stringify({ id: event.id, type: event.type, duplicate, data: event.data }));
});

server.listen(Number(PORT), HOST, () => {
  const { address, port } = server.address();
  console.log(JSON.stringify({ listening: `http://${address}:${port}` }));
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
process.on("SIGINT", () => server.close(() => process.exit(0)));

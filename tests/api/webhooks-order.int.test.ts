import type { Receiver } from "@evalp/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startCheckedReceiver } from "./support/event-catalog.js";
import { createTenant } from "./support/fixtures.js";
import { useStack } from "./support/stack.js";
import { createEndpoint, importSubjects } from "./support/webhooks.js";

// docs/webhooks.md: one webhooks process starts the first attempts to an endpoint in stream
// order (each service's events in the order they were written); with one attempt in flight per
// endpoint (WEBHOOK_ENDPOINT_CONCURRENCY=1) the receiver sees them in that order. This stack runs
// one webhooks process: across replicas no order holds (webhooks-replicas.int.test.ts checks
// what does, each attempt exactly once).
const context = useStack({ WEBHOOK_ENDPOINT_CONCURRENCY: "1", WEBHOOK_ALLOW_PRIVATE: "true" });
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startCheckedReceiver(context.api);
});
afterAll(async () => {
  await receiver?.close();
});

describe("webhook delivery order", () => {
  it("makes one process's first attempts to an endpoint in the order the events were written", async () => {
    const { api } = context;
    const tenant = await createTenant(api);
    await createEndpoint(api, tenant, { url: `${receiver.url}/ordered`, event_types: ["subject.imported"] });
    // The first attempt is answered slowly, so the later events' deliveries wait their turn
    // together and the order is the dispatcher's to keep, not the imports' pace.
    receiver.respond((_request, index) => ({ status: 204, delayMs: index === 0 ? 1_500 : 0 }));
    // One import after the other: each commits its event before the next begins.
    const batches: string[] = [];
    for (let i = 0; i < 30; i++) batches.push((await importSubjects(api, tenant, [`o-${i}`])).batch_id);
    await vi.waitFor(() => expect(receiver.requests.length).toBeGreaterThanOrEqual(batches.length), {
      timeout: 20_000,
      interval: 100,
    });
    const arrived = receiver.requests.map((request) => JSON.parse(request.body).data.batch_id as string);
    expect(arrived).toEqual(batches);
  });
});

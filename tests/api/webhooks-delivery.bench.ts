import { withTransaction, writeOutboxEvent } from "@evalp/kit";
import { type Receiver, startReceiver } from "@evalp/testing";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, bench, describe } from "vitest";
import { type ApiClient, apiClient } from "./support/client.js";
import { createTenant, ik, type Tenant } from "./support/fixtures.js";
import { type Stack, startStack } from "./support/stack.js";

/**
 * What the event path costs, against a baseline that POSTs the same bodies, signed the same way,
 * straight to the same receiver:
 * - latency: events emitted through the API (a one-subject import each, which commits a
 *   `subject.imported` event), API call → receiver, p50/p99; also API answer → receiver;
 * - throughput: a burst of events committed by one service transaction, until the receiver has
 *   every one: deliveries per second of relay → JetStream → consumer → dispatcher.
 * Everything runs in this one process on the test stack (pools of 4 connections per service).
 * Run: npm run bench (or npx vitest bench --run --project unit tests/api/webhooks-delivery.bench.ts)
 */

const BURST = 300;
const BULK = 1_000;
const CONCURRENCY = 16;

let stack: Stack;
let api: ApiClient;
let tenant: Tenant;
let receiver: Receiver;
let secret: string;
/** Subject id → when its import was sent. */
const sentAt = new Map<string, number>();
const evalpLatencies: number[] = [];
/** From the API's answer to the receiver: the event path alone. */
const pathLatencies: number[] = [];
const answeredAt = new Map<string, number>();
const bulkRates: number[] = [];
/** One event at a time: latency without queueing. */
const quietLatencies: number[] = [];
const quietSubjects = new Set<string>();
const evalpRates: number[] = [];
const baselineLatencies: number[] = [];
const baselineRates: number[] = [];
let bodies: string[] = [];

const now = () => performance.timeOrigin + performance.now();

async function pool<T>(
  items: T[],
  work: (item: T) => Promise<void>,
  concurrency = CONCURRENCY,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await work(items[next++] as T);
    }),
  );
}

function until(check: () => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 60_000;
    const poll = () => {
      if (check()) return resolve();
      if (Date.now() > deadline) return reject(new Error("timed out waiting for deliveries"));
      setTimeout(poll, 2);
    };
    poll();
  });
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

function report(name: string, latencies: number[], rates: number[]) {
  const rate = rates.reduce((a, b) => a + b, 0) / rates.length;
  const latency =
    latencies.length === 0
      ? ""
      : `, latency p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms` +
        ` (${latencies.length} deliveries)`;
  console.info(`${name}: ${rate.toFixed(0)} deliveries/s${latency}`);
}

beforeAll(async () => {
  stack = await startStack({ WEBHOOK_ALLOW_PRIVATE: "true", RATE_LIMIT_PER_MINUTE: "1000000" });
  api = apiClient(stack.url);
  tenant = await createTenant(api);
  receiver = await startReceiver();
  const created = await api.post(
    `${tenant.env}/webhooks`,
    { url: `${receiver.url}/bench`, event_types: ["subject.imported", "quota.updated"] },
    { token: tenant.token, idempotencyKey: ik() },
  );
  secret = created.body.secret;
  receiver.onRequest((request) => {
    if (request.path !== "/bench") return;
    const event = JSON.parse(request.body) as { data: { subject_ids?: string[] } };
    const subject = event.data.subject_ids?.[0] ?? "";
    const started = sentAt.get(subject);
    if (started !== undefined && !quietSubjects.has(subject))
      evalpLatencies.push(request.receivedAt - started);
    const answered = answeredAt.get(subject);
    if (answered !== undefined && !quietSubjects.has(subject))
      pathLatencies.push(request.receivedAt - answered);
    if (started !== undefined && quietSubjects.has(subject))
      quietLatencies.push(request.receivedAt - started);
  });
}, 60_000);

afterAll(async () => {
  report("through evalp (API call → outbox → JetStream → worker → receiver)", evalpLatencies, evalpRates);
  report("  of which the event path (API answer → receiver)", pathLatencies, evalpRates);
  report(`through evalp, ${BULK} events committed in one transaction`, [], bulkRates);
  report("through evalp, one event at a time (API call → receiver)", quietLatencies, quietRates);
  report("baseline (the same signed bodies POSTed directly)", baselineLatencies, baselineRates);
  await receiver?.close();
  await stack?.close();
});

let round = 0;
const quietRates: number[] = [];
let baselineRound = 0;

describe("webhook delivery", () => {
  bench(
    `through evalp: ${BURST} events via the API to one endpoint`,
    async () => {
      round += 1;
      const before = receiver.at("/bench").length;
      const started = now();
      await pool(
        Array.from({ length: BURST }, (_, i) => `bench-${round}-${i}`),
        async (externalId) => {
          const at = now();
          const imported = await api.post(
            `${tenant.env}/subjects/batch`,
            { items: [{ external_id: externalId, identity_mode: "anonymous", profile: {} }] },
            { token: tenant.token, idempotencyKey: ik() },
          );
          sentAt.set(imported.body.receipts[0].subject_id, at);
          answeredAt.set(imported.body.receipts[0].subject_id, now());
        },
      );
      await until(() => receiver.at("/bench").length >= before + BURST);
      evalpRates.push(BURST / ((now() - started) / 1000));
      // The warm-up round (connections, JIT, plans) is not measured.
      if (round === 1) evalpLatencies.length = pathLatencies.length = evalpRates.length = 0;
      bodies = receiver
        .at("/bench")
        .slice(-BURST)
        .map((request) => request.body);
    },
    { iterations: 3, warmupIterations: 1, time: 0, warmupTime: 0 },
  );

  let quietRound = 0;
  bench(
    "through evalp: 50 events via the API, one at a time",
    async () => {
      quietRound += 1;
      const before = receiver.at("/bench").length;
      const started = now();
      for (let i = 0; i < 50; i++) {
        const at = now();
        const imported = await api.post(
          `${tenant.env}/subjects/batch`,
          { items: [{ external_id: `quiet-${quietRound}-${i}`, identity_mode: "anonymous", profile: {} }] },
          { token: tenant.token, idempotencyKey: ik() },
        );
        const subject = imported.body.receipts[0].subject_id;
        quietSubjects.add(subject);
        sentAt.set(subject, at);
        await until(() => receiver.at("/bench").length >= before + i + 1);
      }
      quietRates.push(50 / ((now() - started) / 1000));
      if (quietRound === 1) quietLatencies.length = quietRates.length = 0;
    },
    { iterations: 3, warmupIterations: 1, time: 0, warmupTime: 0 },
  );

  let bulkRound = 0;
  bench(
    `through evalp: ${BULK} events committed in one transaction`,
    async () => {
      bulkRound += 1;
      const before = receiver.at("/bench").length;
      await withTransaction(stack.db, async (tx) => {
        for (let i = 0; i < BULK; i++) {
          await writeOutboxEvent(tx, {
            type: "quota.updated",
            environmentId: tenant.environmentId,
            data: { i },
          });
        }
      });
      const committed = now();
      await until(() => receiver.at("/bench").length >= before + BULK);
      // The warm-up round is not measured.
      if (bulkRound > 1) bulkRates.push(BULK / ((now() - committed) / 1000));
    },
    { iterations: 3, warmupIterations: 1, time: 0, warmupTime: 0 },
  );

  bench(
    `baseline: the same ${BURST} bodies signed and POSTed directly`,
    async () => {
      baselineRound += 1;
      const signer = new Webhook(secret);
      const started = now();
      await pool(bodies, async (body) => {
        const id = (JSON.parse(body) as { id: string }).id;
        const at = now();
        const response = await fetch(`${receiver.url}/baseline`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "webhook-id": id,
            "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
            "webhook-signature": signer.sign(id, new Date(), body),
          },
          body,
        });
        await response.arrayBuffer();
        const received = receiver.requests.findLast((request) => request.headers["webhook-id"] === id);
        if (received) baselineLatencies.push(received.receivedAt - at);
      });
      baselineRates.push(bodies.length / ((now() - started) / 1000));
      if (baselineRound === 1) baselineLatencies.length = baselineRates.length = 0;
    },
    { iterations: 3, warmupIterations: 1, time: 0, warmupTime: 0 },
  );
});

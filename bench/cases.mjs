// The cases: what each measures, against which baseline, with which targets (recorded, never
// asserted), and which of them a run measures (BENCH_CASES).
import { randomUUID } from "node:crypto";
import { commitSaturation } from "./commits.mjs";
import { deliveryLatency, deliverySaturation, NO_LATENCY, streamDrain } from "./deliveries.mjs";
import { hopMeasurements } from "./hops.mjs";
import { freshImports, importBody, signedPosts } from "./requests.mjs";
import { ROUND_SECONDS, SATURATION_CONNECTIONS } from "./settings.mjs";
import { connectHarness, fillEventsStream } from "./stream.mjs";
import { FAN_OUT } from "./tenant.mjs";

/** The event rate at which C1 and C2 latency is measured (the 500 events/s). */
const EVENT_RATE = 500;
/** A rate the import path sustains on a small machine, to show the event path's own latency. */
const QUIET_EVENT_RATE = 100;

/** C3's backlog, in events (each delivered to FAN_OUT endpoints): a few seconds of the plane's work. */
const C3_EVENTS = 300 * ROUND_SECONDS;

/** The cases, their baselines and targets. */
export function defineCases(urls, tenant, planePools) {
  const keyHeaders = { "x-api-key": tenant.apiKey };
  const replayKey = randomUUID();
  const replayBody = importBody("bench-replayed");
  /** Fresh one-subject imports into one of C2's environments (new targets each time, as each run wants). */
  const importsInto = ({ path, apiKey }) => freshImports(`${urls.gateway}${path}/subjects/batch`, apiKey);
  /** C2's latency at `rate`: from each import's send to its event's arrival at the one endpoint. */
  const c2Latency = (rate) => () =>
    deliveryLatency(importsInto(tenant.latency), { receiver: urls.receiver, prefix: "/c2-latency" }, rate);
  return [
    {
      id: "A0",
      what: "bare Fastify hello (ceiling)",
      target: { url: `${urls.hello}/hello` },
    },
    {
      id: "A1",
      what: "monolith: Fastify + pg, same key auth + SELECT",
      baseline: "A0",
      target: { url: `${urls.monolith}${tenant.appPath}`, headers: keyHeaders },
    },
    {
      id: "A2",
      what: "GET APP: gateway → control → pg (API key)",
      baseline: "A1",
      targets: { throughputRatio: 0.6, p99OverBaselineMs: 2 },
      target: { url: `${urls.gateway}${tenant.appPath}`, headers: keyHeaders },
    },
    {
      id: "A2n",
      what: "GET /v1/auth/principal: the gateway alone (cached principal, no RPC)",
      baseline: "A2",
      target: { url: `${urls.gateway}/v1/auth/principal`, headers: keyHeaders },
    },
    {
      id: "B1m",
      what: "monolith: Fastify + pg, same key auth + the import's transaction (no idempotency, no hop)",
      baseline: "A1",
      target: freshImports(`${urls.monolith}${tenant.envPath}/subjects/batch`, tenant.apiKey),
    },
    {
      id: "B1",
      what: "POST subjects/batch, fresh Idempotency-Key",
      baseline: "B1m",
      // The gateway's CPU per idempotent POST against its CPU per GET (A2's).
      targets: { throughputRatio: 0.5, cpuOf: { process: "gateway", vs: "A2", maxRatio: 2 } },
      target: freshImports(`${urls.gateway}${tenant.envPath}/subjects/batch`, tenant.apiKey),
    },
    {
      id: "B2",
      what: "POST subjects/batch, replay of one key",
      baseline: "A2",
      targets: { throughputRatio: 2.5, p99MaxMs: 3 },
      replayKey,
      target: {
        url: `${urls.gateway}${tenant.envPath}/subjects/batch`,
        method: "POST",
        headers: { ...keyHeaders, "content-type": "application/json", "idempotency-key": replayKey },
        body: replayBody,
      },
    },
    {
      id: "H0",
      what: "one RPC (HealthService.Check) over raw node:http2, client and server: the hop's floor",
      unit: "calls",
      ...hopMeasurements("h2", urls.hopH2),
    },
    {
      id: "H1",
      what: "the same RPC through the platform's Connect client and server (kit's own on node:http2, its interceptors)",
      baseline: "H0",
      unit: "calls",
      ...hopMeasurements("connect", urls.hopConnect),
    },
    {
      id: "C1",
      what: `signed POSTs straight to the receiver (${SATURATION_CONNECTIONS} connections)`,
      target: signedPosts(`${urls.receiver}/c1`, tenant.fanOut.secret),
      rate: EVENT_RATE,
    },
    {
      id: "C2",
      what: `import via the API → outbox → JetStream → webhooks worker → receiver (×${FAN_OUT} endpoints; latency: 1)`,
      baseline: "C1",
      unit: "deliveries",
      targets: { minRps: 3000 },
      target: importsInto(tenant.fanOut),
      rate: EVENT_RATE,
      saturation: (children) =>
        deliverySaturation(
          importsInto(tenant.fanOut),
          { receiver: urls.receiver, prefix: "/c2/", perCall: FAN_OUT },
          children,
        ),
      fixed: c2Latency(EVENT_RATE),
    },
    {
      id: "C2q",
      what: `C2's latency at ${QUIET_EVENT_RATE} events/s, below what the import path sustains (no queueing in the API)`,
      unit: "deliveries",
      rate: QUIET_EVENT_RATE,
      latencyOnly: true,
      targets: { p50MaxMs: 8, p99MaxMs: 20 },
      target: importsInto(tenant.latency),
      fixed: c2Latency(QUIET_EVENT_RATE),
    },
    c3Case(urls, tenant),
    {
      id: "W1n",
      what: "W1's commits written as they were while each announced its outbox row with NOTIFY",
      unit: "commits",
      saturation: async (children) => commitSaturation(await planePools(), children, { notify: true }),
      fixed: async () => NO_LATENCY,
    },
    {
      id: "W1",
      what: `event-emitting commits from all four planes at once (${SATURATION_CONNECTIONS} connections, each plane's role, one outbox event per transaction)`,
      baseline: "W1n",
      unit: "commits",
      saturation: async (children) => commitSaturation(await planePools(), children),
      fixed: async () => NO_LATENCY,
    },
  ];
}

/**
 * C3: the webhooks plane alone, draining a backlog of C2's events (×FAN_OUT endpoints) put on
 * the events stream while its process was paused: stored → attempted → recorded, per second.
 */
function c3Case(urls, tenant) {
  const environmentId = tenant.fanOut.path.split("/").at(-1);
  // A connection per fill: none is left open to keep the bench alive once the server stops.
  const fill = async () => {
    const nc = await connectHarness(urls.nats);
    try {
      return (await fillEventsStream(nc, environmentId, C3_EVENTS)).length;
    } finally {
      await nc.close();
    }
  };
  return {
    id: "C3",
    what: `the webhooks plane alone: ${C3_EVENTS} events already in the stream → stored → attempted → recorded (×${FAN_OUT} endpoints)`,
    baseline: "C1",
    unit: "deliveries",
    targets: { throughputRatio: 0.3 },
    saturation: (children) =>
      streamDrain(
        fill,
        { receiver: urls.receiver, prefix: "/c2/", perEvent: FAN_OUT, plane: "webhooks" },
        children,
      ),
    fixed: async () => NO_LATENCY,
  };
}

/** BENCH_CASES=A2,B2 measures only those (and the baselines they are compared with), e.g. to profile one. */
export function selectCases(cases, wanted) {
  if (!wanted) return cases;
  // A2 calibrates the fixed rate; baselines are followed to the end of their chain.
  const ids = new Set([...wanted.split(",").map((id) => id.trim()), "A2"]);
  for (let added = true; added; ) {
    added = false;
    for (const c of cases) {
      if (ids.has(c.id) && c.baseline && !ids.has(c.baseline)) {
        ids.add(c.baseline);
        added = true;
      }
    }
  }
  return cases.filter((c) => ids.has(c.id));
}

// The platform's request benchmark (`npm run bench`, after the vitest benches). It starts the
// platform once as `npm start` does (five processes, NODE_ENV=production, LOG_LEVEL=warn, a
// fresh database, its own Redis prefix and a NATS server of its own with production's users and
// permissions) plus two baseline servers and a webhook
// receiver (bench/servers.mjs), and measures every case side by side with autocannon, in
// shuffled rounds:
// - saturation: requests/s with SATURATION_CONNECTIONS keep-alive connections for ROUND_SECONDS
//   (C2: deliveries/s from the first import to the last arrival at the receiver);
// - fixed rate: p50/p99 latency at half of A2's saturation (calibrated once, the same rate for
//   every A and B case; C1 and C2 at EVENT_RATE), offered by FIXED_STREAMS autocannon instances
//   of one connection each, started evenly across a second (autocannon paces each connection per
//   second, so staggering them spreads the bursts); C2's latency runs from the API call's send to
//   the event's arrival at the receiver, on a clock both processes share;
// - CPU per request of every process involved, from /proc/<pid>/stat during the saturation run.
// Ratios are taken per round against the case's baseline in the same round; the table shows
// their median. Results also go to bench/results.json. Environment: BENCH_ROUNDS,
// BENCH_SECONDS, BENCH_CPU_PROF, BENCH_CASES, DATABASE_URL, REDIS_URL.
import { spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { once } from "node:events";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { configSchema, withDefaultUser } from "@evalp/kit";
import { natsAuthorization, startNatsServer } from "@evalp/testing";
import autocannon from "autocannon";
import pg from "pg";
import { Webhook } from "standardwebhooks";
import { migrateAll } from "../scripts/migrate.mjs";

/** A setting from the environment (read by name; none of them affect a build). */
const setting = (name) => process.env[name];

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const ROUNDS = Number(setting("BENCH_ROUNDS") ?? 3);
const ROUND_SECONDS = Number(setting("BENCH_SECONDS") ?? 3);
const SATURATION_CONNECTIONS = 16;
const FIXED_STREAMS = 8;
const SERVICES = ["control", "platform", "interview", "webhooks"];
const CLK_TCK = 100;

const startedAt = Date.now();
const log = (message) => console.error(`[bench ${((Date.now() - startedAt) / 1000).toFixed(0)}s] ${message}`);

async function freePort() {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address();
  server.close();
  await once(server, "close");
  return port;
}

const percentile = (sorted, p) =>
  sorted.length === 0
    ? Number.NaN
    : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const median = (values) => {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
function shuffle(items) {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

// ---------------------------------------------------------------- CPU from /proc

/** utime + stime of one process, in clock ticks (fields 14 and 15 of /proc/<pid>/stat). */
function cpuTicks(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

/** The pids of every process whose command is `comm` (postgres backends, redis, nats). */
function pidsNamed(comm) {
  const pids = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() === comm) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** A snapshot of CPU ticks per group: our children by name, and the shared servers summed. */
function cpuSnapshot(children) {
  const snapshot = {};
  for (const [name, child] of children) snapshot[name] = cpuTicks(child.pid);
  for (const [group, comm] of [
    ["postgres", "postgres"],
    ["redis", "redis-server"],
    ["nats", "nats-server"],
  ]) {
    snapshot[group] = pidsNamed(comm).reduce((sum, pid) => sum + cpuTicks(pid), 0);
  }
  snapshot.autocannon = cpuTicks(process.pid);
  return snapshot;
}

// ---------------------------------------------------------------- processes

const children = new Map();
let stopping = false;

/** BENCH_CPU_PROF=1 writes a V8 CPU profile of the gateway and control to var/bench-prof/ at exit. */
const PROFILED = setting("BENCH_CPU_PROF") === "1" ? ["gateway", "control"] : [];

function startProcess(name, args, env) {
  const flags = PROFILED.includes(name)
    ? ["--cpu-prof", "--cpu-prof-dir=var/bench-prof", `--cpu-prof-name=${name}.cpuprofile`]
    : [];
  const child = spawn(process.execPath, [...flags, ...args], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.set(name, child);
  child.stderr.on("data", (chunk) => process.stderr.write(`${name}: ${chunk}`));
  child.on("exit", (code, signal) => {
    if (!stopping) {
      console.error(`${name} exited (${signal ?? code}) during the bench`);
      process.exitCode = 1;
    }
  });
  return child;
}

async function waitFor(url, what) {
  for (let attempt = 0; attempt < 200; attempt++) {
    const ok = await fetch(url)
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what} did not become ready at ${url}`);
}

async function stopAll() {
  stopping = true;
  const exits = [...children.values()]
    .filter((child) => child.exitCode === null)
    .map((child) => {
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      return Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 12_000))]).then(() => {
        if (child.exitCode === null) child.kill("SIGKILL");
      });
    });
  await Promise.all(exits);
}

// ---------------------------------------------------------------- load

/** One autocannon run; latencies are kept exactly (autocannon's histogram has 1 ms resolution). */
async function load(target, options) {
  const latencies = [];
  let non2xx = 0;
  const instance = autocannon({
    url: target.url,
    method: target.method ?? "GET",
    headers: target.headers,
    body: target.body,
    requests:
      target.setupRequest || target.onResponse
        ? [{ setupRequest: target.setupRequest, onResponse: target.onResponse }]
        : undefined,
    duration: options.seconds,
    connections: options.connections,
    overallRate: options.rate,
    timeout: 10,
  });
  instance.on("response", (_client, statusCode, _bytes, responseTime) => {
    if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
    else non2xx += 1;
  });
  const result = await instance;
  return { latencies, non2xx, errors: result.errors + result.timeouts, seconds: result.duration };
}

async function saturation(target, children) {
  const before = cpuSnapshot(children);
  const run = await load(target, { seconds: ROUND_SECONDS, connections: SATURATION_CONNECTIONS });
  const after = cpuSnapshot(children);
  const ok = run.latencies.length;
  const cpu = {};
  for (const group of Object.keys(after)) {
    const ms = ((after[group] - (before[group] ?? 0)) * 1000) / CLK_TCK;
    if (ms > 0) cpu[group] = ok > 0 ? (ms * 1000) / ok : Number.NaN; // µs per request
  }
  return { rps: ok / run.seconds, non2xx: run.non2xx, errors: run.errors, cpuUsPerRequest: cpu };
}

async function fixedRate(target, rate) {
  const perStream = Math.max(1, Math.round(rate / FIXED_STREAMS));
  const runs = [];
  for (let i = 0; i < FIXED_STREAMS; i++) {
    runs.push(load(target, { seconds: ROUND_SECONDS, connections: 1, rate: perStream }));
    await new Promise((resolve) => setTimeout(resolve, 1000 / FIXED_STREAMS));
  }
  const done = await Promise.all(runs);
  const latencies = done.flatMap((run) => run.latencies).sort((a, b) => a - b);
  return {
    offered: perStream * FIXED_STREAMS,
    achieved: latencies.length / ROUND_SECONDS,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    non2xx: done.reduce((sum, run) => sum + run.non2xx, 0),
    errors: done.reduce((sum, run) => sum + run.errors, 0),
  };
}

// ---------------------------------------------------------------- the run

const baseUrl = new URL(withDefaultUser(setting("DATABASE_URL") ?? "postgres://127.0.0.1:5432/evalp"));
const suffix = `${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
const databaseName = `evalp_bench_${suffix}`;
const databaseUrl = new URL(baseUrl);
databaseUrl.pathname = `/${databaseName}`;
const adminUrl = new URL(baseUrl);
adminUrl.pathname = "/postgres";
// NODE_ENV=production: each process connects to NATS as its own user, within its permissions,
// on a server of the run's own (the default stream names).
const authorization = natsAuthorization(configSchema.parse({}));
let nats = null;

async function cleanUp() {
  await stopAll();
  const admin = new pg.Client({ connectionString: adminUrl.toString() });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`).catch(() => {});
  await admin.end();
  await nats?.close();
}

async function json(response) {
  const text = await response.text();
  if (!response.ok) throw new Error(`${response.status} ${response.url}: ${text}`);
  return JSON.parse(text);
}

/** Each C2 event goes to this many endpoints (all on the receiver): deliveries = events × FAN_OUT. */
const FAN_OUT = 10;
/** The event rate at which C1 and C2 latency is measured (the issue's 500 events/s). */
const EVENT_RATE = 500;
/** A rate the import path sustains on a small machine, to show the event path's own latency. */
const QUIET_EVENT_RATE = 100;

async function setUpTenant(base, receiverUrl) {
  const post = (path, body, headers = {}) =>
    fetch(`${base}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": randomUUID(), ...headers },
      body: JSON.stringify(body),
    }).then(json);
  const signup = await post("/auth/signup", {
    email: `bench-${suffix}@example.com`,
    password: "correct horse battery staple",
    organization_name: "Bench",
  });
  const auth = { authorization: `Bearer ${signup.access_token}` };
  const org = `/v1/organizations/${signup.organization_id}`;
  const app = await post(`${org}/apps`, { slug: "bench", name: "Bench" }, auth);
  const appPath = `${org}/apps/${app.id}`;
  const env = await post(`${appPath}/environments`, { slug: "production", name: "Production" }, auth);
  const envPath = `${appPath}/environments/${env.id}`;
  const key = await post(
    `${envPath}/api-keys`,
    { name: "bench", scopes: ["org:read", "subjects:write"] },
    auth,
  );
  // Raise the quotas so that fresh subjects never hit the active_subjects limit.
  const raiseQuotas = async (path) => {
    const quotas = await fetch(`${base}${path}/quotas`, { headers: auth }).then(json);
    const limits = Object.fromEntries(Object.keys(quotas.limits).map((name) => [name, 1_000_000]));
    await fetch(`${base}${path}/quotas`, {
      method: "PATCH",
      headers: { ...auth, "content-type": "application/json", "idempotency-key": randomUUID() },
      body: JSON.stringify({ expected_revision: quotas.revision, limits }),
    }).then(json);
  };
  await raiseQuotas(envPath);
  // C2 imports into environments of their own, whose `subject.imported` events have endpoints:
  // FAN_OUT of them for throughput, one for latency.
  const webhookEnvironment = async (slug, paths) => {
    const created = await post(`${appPath}/environments`, { slug, name: slug }, auth);
    const path = `${appPath}/environments/${created.id}`;
    await raiseQuotas(path);
    const envKey = await post(`${path}/api-keys`, { name: slug, scopes: ["subjects:write"] }, auth);
    let secret = "";
    for (const at of paths) {
      const endpoint = await post(
        `${path}/webhooks`,
        { url: `${receiverUrl}${at}`, event_types: ["subject.imported"] },
        auth,
      );
      secret = endpoint.secret;
    }
    return { path, apiKey: envKey.secret, secret };
  };
  const fanOut = await webhookEnvironment(
    "fan-out",
    Array.from({ length: FAN_OUT }, (_, i) => `/c2/${i}`),
  );
  const latency = await webhookEnvironment("latency", ["/c2-latency"]);
  return { appPath, envPath, apiKey: key.secret, fanOut, latency };
}

/** The cases, their baselines and targets. */
function defineCases(urls, tenant) {
  const keyHeaders = { "x-api-key": tenant.apiKey };
  const replayKey = randomUUID();
  const replayBody = importBody("bench-replayed");
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
      id: "B1",
      what: "POST subjects/batch, fresh Idempotency-Key",
      baseline: "A2",
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
      saturation: () => hopSaturation("h2", urls.hopH2, "hop-h2"),
      fixed: () => hopLatency("h2", urls.hopH2),
    },
    {
      id: "H1",
      what: "the same RPC through the platform's Connect client and server (connect-node, kit's interceptors)",
      baseline: "H0",
      unit: "calls",
      saturation: () => hopSaturation("connect", urls.hopConnect, "hop-connect"),
      fixed: () => hopLatency("connect", urls.hopConnect),
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
      targets: { throughputRatio: 0.6, minRps: 3000, p50MaxMs: 5, p99MaxMs: 20 },
      target: freshImports(`${urls.gateway}${tenant.fanOut.path}/subjects/batch`, tenant.fanOut.apiKey),
      rate: EVENT_RATE,
      saturation: (children) =>
        deliverySaturation(
          freshImports(`${urls.gateway}${tenant.fanOut.path}/subjects/batch`, tenant.fanOut.apiKey),
          { receiver: urls.receiver, prefix: "/c2/", perCall: FAN_OUT },
          children,
        ),
      fixed: () =>
        deliveryLatency(
          freshImports(`${urls.gateway}${tenant.latency.path}/subjects/batch`, tenant.latency.apiKey),
          { receiver: urls.receiver, prefix: "/c2-latency" },
          EVENT_RATE,
        ),
    },
    {
      id: "C2q",
      what: `C2's latency at ${QUIET_EVENT_RATE} events/s, below what the import path sustains (no queueing in the API)`,
      unit: "deliveries",
      rate: QUIET_EVENT_RATE,
      latencyOnly: true,
      target: freshImports(`${urls.gateway}${tenant.latency.path}/subjects/batch`, tenant.latency.apiKey),
      fixed: () =>
        deliveryLatency(
          freshImports(`${urls.gateway}${tenant.latency.path}/subjects/batch`, tenant.latency.apiKey),
          { receiver: urls.receiver, prefix: "/c2-latency" },
          QUIET_EVENT_RATE,
        ),
    },
  ];
}

const now = () => performance.timeOrigin + performance.now();

/** The body of a one-subject import. */
const importBody = (externalId) =>
  JSON.stringify({ items: [{ external_id: externalId, identity_mode: "anonymous", profile: {} }] });

/** A one-subject import with a fresh Idempotency-Key (so a fresh subject and event) each time. */
function freshImports(url, apiKey) {
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
function signedPosts(url, secret) {
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

async function receiverStats(receiver, prefix, arrivals = false) {
  const query = new URLSearchParams({ prefix, arrivals: arrivals ? "1" : "0" });
  return fetch(`${receiver}/stats?${query}`).then((r) => r.json());
}

/** Waits until `expected` deliveries arrived under `prefix`, or none arrived for 5 s. */
async function drain(receiver, prefix, expected) {
  let seen = -1;
  let progressAt = Date.now();
  for (;;) {
    const { count } = await receiverStats(receiver, prefix);
    if (count >= expected) break;
    if (count !== seen) [seen, progressAt] = [count, Date.now()];
    if (Date.now() - progressAt > 5_000) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return receiverStats(receiver, prefix, true);
}

/** The rate at which H0 and H1 latency is measured: calls a second, paced by the client. */
const HOP_RATE = 1000;

/**
 * Runs `bench/servers.mjs hop-client` against a hop server. The client warms up, says "warm",
 * and starts its clock when told "go", so that the server's CPU is read over the same window.
 */
async function hopClient(kind, url, options, serverName) {
  const args = [
    "bench/servers.mjs",
    "hop-client",
    kind,
    url,
    String(ROUND_SECONDS),
    String(options.concurrency ?? 1),
  ];
  if (options.rate) args.push(String(options.rate));
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout });
  let serverBefore = 0;
  let result;
  for await (const line of lines) {
    if (line === "warm") {
      serverBefore = cpuTicks(children.get(serverName).pid);
      child.stdin.write("go\n");
    } else {
      result = JSON.parse(line);
    }
  }
  const serverMs = ((cpuTicks(children.get(serverName).pid) - serverBefore) * 1000) / CLK_TCK;
  if (!result) throw new Error(`hop client (${kind}) gave no result`);
  return { ...result, serverCpuUs: serverMs * 1000 };
}

/** H0/H1 at saturation: calls a second with SATURATION_CONNECTIONS at once, CPU of both ends. */
async function hopSaturation(kind, url, serverName) {
  const run = await hopClient(kind, url, { concurrency: SATURATION_CONNECTIONS }, serverName);
  const perCall = (us) => (run.calls > 0 ? us / run.calls : Number.NaN);
  return {
    rps: run.calls / run.seconds,
    non2xx: 0,
    errors: run.failed,
    cpuUsPerRequest: { "hop client": perCall(run.cpuUs), [serverName]: perCall(run.serverCpuUs) },
  };
}

/** H0/H1 latency at HOP_RATE calls a second. */
async function hopLatency(kind, url) {
  const run = await hopClient(kind, url, { rate: HOP_RATE }, kind === "h2" ? "hop-h2" : "hop-connect");
  const latencies = run.latenciesMs.sort((a, b) => a - b);
  return {
    offered: HOP_RATE,
    achieved: run.calls / run.seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    non2xx: 0,
    errors: run.failed,
  };
}

/**
 * C2 at saturation: imports through the API for a round, then until every event reached every
 * endpoint: deliveries per second from the first request to the last arrival.
 */
async function deliverySaturation(target, { receiver, prefix, perCall }, children) {
  await fetch(`${receiver}/stats`, { method: "DELETE" });
  const before = cpuSnapshot(children);
  const started = now();
  const run = await load(target, { seconds: ROUND_SECONDS, connections: SATURATION_CONNECTIONS });
  const expected = run.latencies.length * perCall;
  const stats = await drain(receiver, prefix, expected);
  const after = cpuSnapshot(children);
  const last = Math.max(...stats.arrivals.map(([, at]) => at));
  const delivered = stats.count;
  const cpu = {};
  for (const group of Object.keys(after)) {
    const ms = ((after[group] - (before[group] ?? 0)) * 1000) / CLK_TCK;
    if (ms > 0) cpu[group] = delivered > 0 ? (ms * 1000) / delivered : Number.NaN;
  }
  return {
    rps: delivered / ((last - started) / 1000),
    non2xx: run.non2xx + Math.max(0, expected - delivered),
    errors: run.errors,
    cpuUsPerRequest: cpu,
  };
}

/**
 * C2's latency: imports offered at `rate` through the API (one endpoint), each event's latency
 * from the moment its API call was sent to its arrival at the receiver.
 */
async function deliveryLatency(target, { receiver, prefix }, rate) {
  await fetch(`${receiver}/stats`, { method: "DELETE" });
  const sentAt = new Map();
  const traced = {
    ...target,
    onResponse: (status, body, context) => {
      if (status !== 200) return;
      const subjectId = JSON.parse(body).receipts?.[0]?.subject_id;
      if (subjectId) sentAt.set(subjectId, context.sentAt);
    },
  };
  const api = await fixedRate(traced, rate);
  const stats = await drain(receiver, prefix, sentAt.size);
  const latencies = stats.arrivals
    .filter(([id]) => sentAt.has(id))
    .map(([id, at]) => at - sentAt.get(id))
    .sort((a, b) => a - b);
  return {
    offered: api.offered,
    achieved: latencies.length / ROUND_SECONDS,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    non2xx: api.non2xx + Math.max(0, sentAt.size - latencies.length),
    errors: api.errors,
  };
}

async function main() {
  log(`database ${databaseName}, ${ROUNDS} rounds × ${ROUND_SECONDS} s per measurement`);
  await migrateAll(databaseUrl.toString());
  nats = await startNatsServer({ authorization });

  const ports = Object.fromEntries(
    await Promise.all(
      [...SERVICES, "gateway", "hello", "monolith", "receiver", "hop-connect", "hop-h2"].map(async (name) => [
        name,
        { rpc: await freePort(), ops: await freePort() },
      ]),
    ),
  );
  const env = {
    ...process.env,
    NODE_ENV: "production",
    LOG_LEVEL: "warn",
    DATABASE_URL: databaseUrl.toString(),
    JWT_SECRET: randomBytes(32).toString("hex"),
    SERVICE_TOKEN_SECRETS: `bench:${randomBytes(32).toString("hex")}`,
    REDIS_KEY_PREFIX: `evalp-bench-${suffix}:`,
    RATE_LIMIT_PER_MINUTE: "1000000000",
    // The webhook receiver listens on loopback.
    WEBHOOK_ALLOW_PRIVATE: "true",
    MAIL_DIR: `var/bench-mail-${suffix}`,
    NATS_URL: nats.url,
  };
  for (const name of SERVICES) env[`${name.toUpperCase()}_URL`] = `http://127.0.0.1:${ports[name].rpc}`;
  for (const name of SERVICES) {
    startProcess(name, [`services/${name}/dist/main.js`], {
      ...env,
      SERVICE_PORT: String(ports[name].rpc),
      OPS_PORT: String(ports[name].ops),
      ...authorization.credentials(name),
    });
  }
  startProcess("gateway", ["services/gateway/dist/main.js"], {
    ...env,
    PORT: String(ports.gateway.rpc),
    OPS_PORT: String(ports.gateway.ops),
    ...authorization.credentials("gateway"),
  });
  startProcess("hello", ["bench/servers.mjs", "hello"], { ...env, PORT: String(ports.hello.rpc) });
  startProcess("monolith", ["bench/servers.mjs", "monolith"], { ...env, PORT: String(ports.monolith.rpc) });
  startProcess("receiver", ["bench/servers.mjs", "receiver"], { ...env, PORT: String(ports.receiver.rpc) });
  for (const name of ["hop-connect", "hop-h2"]) {
    startProcess(name, ["bench/servers.mjs", name], { ...env, PORT: String(ports[name].rpc) });
  }
  const urls = {
    hopConnect: `http://127.0.0.1:${ports["hop-connect"].rpc}`,
    hopH2: `http://127.0.0.1:${ports["hop-h2"].rpc}`,
    gateway: `http://127.0.0.1:${ports.gateway.rpc}`,
    hello: `http://127.0.0.1:${ports.hello.rpc}`,
    monolith: `http://127.0.0.1:${ports.monolith.rpc}`,
    receiver: `http://127.0.0.1:${ports.receiver.rpc}`,
  };
  await waitFor(`http://127.0.0.1:${ports.gateway.ops}/readyz`, "the gateway");
  await waitFor(`${urls.hello}/hello`, "the hello server");
  await waitFor(`${urls.receiver}/stats`, "the receiver");
  log("platform ready");

  const tenant = await setUpTenant(urls.gateway, urls.receiver);
  const cases = selectCases(defineCases(urls, tenant), setting("BENCH_CASES"));
  const byId = Object.fromEntries(cases.map((c) => [c.id, c]));
  // B2's key is used once for real; every later request is its replay.
  if (byId.B2) {
    const first = await fetch(byId.B2.target.url, {
      method: "POST",
      headers: byId.B2.target.headers,
      body: byId.B2.target.body,
    });
    if (first.status !== 200) throw new Error(`B2 setup: ${first.status} ${await first.text()}`);
  }
  // Every case answers 2xx before we measure it.
  for (const c of cases.filter((c) => c.target)) {
    const run = await load(c.target, { seconds: 1, connections: 4 });
    if (run.latencies.length === 0 || run.non2xx > 0) {
      throw new Error(`${c.id} does not answer 2xx (${run.non2xx} non-2xx, ${run.errors} errors)`);
    }
  }
  log("warmed up; calibrating the fixed rate on A2");
  const calibration = await saturation(byId.A2.target, children);
  const rate = Math.max(FIXED_STREAMS, Math.round(calibration.rps / 2));
  log(`A2 saturates at ${calibration.rps.toFixed(0)} req/s: fixed rate ${rate} req/s`);

  const rounds = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order = shuffle(cases.map((c) => c.id));
    const measured = {};
    for (const id of order) {
      const c = byId[id];
      const sat = c.latencyOnly
        ? { rps: Number.NaN, non2xx: 0, errors: 0, cpuUsPerRequest: {} }
        : c.saturation
          ? await c.saturation(children)
          : await saturation(c.target, children);
      const fixed = c.fixed ? await c.fixed() : await fixedRate(c.target, c.rate ?? rate);
      measured[id] = { ...sat, fixed };
    }
    rounds.push({ order, measured });
    log(
      `round ${round + 1}/${ROUNDS}: ${order.map((id) => `${id} ${measured[id].rps.toFixed(0)}/s`).join(", ")}`,
    );
  }

  const summary = cases.map((c) => summarize(c, rounds));
  printTable(summary);
  const results = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: (await import("node:os")).cpus().length,
    settings: { ROUNDS, ROUND_SECONDS, SATURATION_CONNECTIONS, FIXED_STREAMS, fixedRate: rate },
    calibration,
    cases: summary,
    rounds,
    durationSeconds: (Date.now() - startedAt) / 1000,
  };
  writeFileSync(new URL("results.json", import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
  log(`wrote bench/results.json in ${results.durationSeconds.toFixed(0)} s`);
}

/** BENCH_CASES=A2,B2 measures only those (and the baselines they are compared with), e.g. to profile one. */
function selectCases(cases, wanted) {
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

function summarize(c, rounds) {
  const of = (round, id) => round.measured[id];
  const rps = median(rounds.map((r) => of(r, c.id).rps));
  const p50 = median(rounds.map((r) => of(r, c.id).fixed.p50));
  const p99 = median(rounds.map((r) => of(r, c.id).fixed.p99));
  const cpu = {};
  for (const group of Object.keys(of(rounds[0], c.id).cpuUsPerRequest)) {
    cpu[group] = median(rounds.map((r) => of(r, c.id).cpuUsPerRequest[group] ?? 0));
  }
  const entry = {
    id: c.id,
    what: c.what,
    rps,
    p50Ms: p50,
    p99Ms: p99,
    unit: c.unit ?? "requests",
    offeredRate: of(rounds[0], c.id).fixed.offered,
    achievedRate: median(rounds.map((r) => of(r, c.id).fixed.achieved)),
    non2xx: rounds.reduce((sum, r) => sum + of(r, c.id).non2xx + of(r, c.id).fixed.non2xx, 0),
    errors: rounds.reduce((sum, r) => sum + of(r, c.id).errors + of(r, c.id).fixed.errors, 0),
    cpuUsPerRequest: cpu,
    baseline: c.baseline ?? null,
  };
  if (c.baseline) {
    entry.throughputRatio = median(rounds.map((r) => of(r, c.id).rps / of(r, c.baseline).rps));
    entry.p99DeltaMs = median(rounds.map((r) => of(r, c.id).fixed.p99 - of(r, c.baseline).fixed.p99));
  }
  if (c.targets) {
    const checks = [];
    const t = c.targets;
    if (t.throughputRatio !== undefined) {
      checks.push({
        target: `${c.id}/${c.baseline} ≥ ${t.throughputRatio}`,
        met: entry.throughputRatio >= t.throughputRatio,
      });
    }
    if (t.p99OverBaselineMs !== undefined) {
      checks.push({
        target: `p99 ≤ ${c.baseline} p99 + ${t.p99OverBaselineMs} ms`,
        met: entry.p99DeltaMs <= t.p99OverBaselineMs,
      });
    }
    if (t.minRps !== undefined) checks.push({ target: `≥ ${t.minRps}/s`, met: rps >= t.minRps });
    if (t.p50MaxMs !== undefined) checks.push({ target: `p50 ≤ ${t.p50MaxMs} ms`, met: p50 <= t.p50MaxMs });
    if (t.p99MaxMs !== undefined) checks.push({ target: `p99 ≤ ${t.p99MaxMs} ms`, met: p99 <= t.p99MaxMs });
    entry.targets = checks;
  }
  return entry;
}

function printTable(summary) {
  const fmt = (v, digits = 2) => (Number.isFinite(v) ? v.toFixed(digits) : "—");
  const header = [
    "case",
    "per s",
    "fixed rate/s",
    "p50 ms",
    "p99 ms",
    "vs",
    "ratio",
    "Δp99 ms",
    "CPU µs per (top)",
    "target",
  ];
  const rows = summary.map((s) => {
    const cpu = Object.entries(s.cpuUsPerRequest)
      .filter(([group]) => group !== "autocannon")
      .sort((a, b) => b[1] - a[1]);
    const total = cpu.reduce((sum, [, us]) => sum + us, 0);
    const top = cpu
      .slice(0, 3)
      .map(([group, us]) => `${group} ${us.toFixed(0)}`)
      .join(", ");
    const targets = (s.targets ?? []).map((t) => `${t.met ? "MET" : "MISSED"} ${t.target}`).join("; ");
    return [
      `${s.id}${s.non2xx + s.errors > 0 ? "*" : ""}`,
      fmt(s.rps, 0),
      `${s.offeredRate} (${fmt(s.achievedRate, 0)})`,
      fmt(s.p50Ms),
      fmt(s.p99Ms),
      s.baseline ?? "",
      s.baseline ? fmt(s.throughputRatio) : "",
      s.baseline ? fmt(s.p99DeltaMs) : "",
      `${total.toFixed(0)} = ${top}`,
      targets,
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) => cells.map((cell, i) => cell.padEnd(widths[i])).join(" │ ");
  console.log(`\n${line(header)}\n${widths.map((w) => "─".repeat(w)).join("─┼─")}`);
  for (const row of rows) console.log(line(row));
  console.log(
    [
      `\nMedians over ${ROUNDS} shuffled rounds. per s: requests (C: deliveries) per second at saturation;`,
      "fixed rate/s: offered (achieved) rate of the latency run; ratio: case/baseline per s in the same round;",
      "Δp99: case p99 − baseline p99; CPU: µs of each process per request (C: per delivery) at saturation.",
    ].join("\n"),
  );
  for (const s of summary) console.log(`  ${s.id}: ${s.what}`);
  if (summary.some((s) => s.non2xx + s.errors > 0)) console.log("  * some responses were not 2xx or failed");
}

try {
  await main();
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await cleanUp().catch((error) => console.error("cleanup failed:", error));
}

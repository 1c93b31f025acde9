// The platform as `npm start` runs it (five processes, NODE_ENV=production, LOG_LEVEL=warn) on a
// fresh database, a Redis prefix and a NATS server of the run's own, beside the baselines, the
// hop servers and the webhook receiver (bench/servers.mjs); and its removal at the end.
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { configSchema, generateServiceKeySet, schemaRoleUrl, withDefaultUser } from "@evalp/kit";
import { freePort, natsAuthorization, startNatsServer } from "@evalp/testing";
import pg from "pg";
import { migrateAll } from "../scripts/migrate.mjs";
import { parentPid, trees } from "./cpu.mjs";
import { startProcess, stopAll, waitFor } from "./processes.mjs";
import { setting } from "./settings.mjs";

const SERVICES = ["control", "platform", "interview", "webhooks"];

const baseUrl = new URL(withDefaultUser(setting("DATABASE_URL") ?? "postgres://127.0.0.1:5432/evalp"));
/** Names the run's database, Redis prefix, mail folder and signup. */
export const suffix = `${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
export const databaseName = `evalp_bench_${suffix}`;
export const databaseUrl = new URL(baseUrl);
databaseUrl.pathname = `/${databaseName}`;
/** The server's maintenance database, where the run's database is made and dropped. */
export const adminUrl = new URL(baseUrl);
adminUrl.pathname = "/postgres";
// NODE_ENV=production: each process connects to NATS as its own user, within its permissions,
// on a server of the run's own (the default stream names).
const authorization = natsAuthorization(configSchema.parse({}));
let nats = null;

/** Starts everything and waits until it is ready; returns the URL of each server the cases load. */
export async function startPlatform() {
  await migrateAll(databaseUrl.toString());
  nats = await startNatsServer({ authorization });
  await measureTrees(new URL(nats.url).port);

  const ports = Object.fromEntries(
    await Promise.all(
      [...SERVICES, "gateway", "hello", "monolith", "receiver", "hop-connect", "hop-h2"].map(async (name) => [
        name,
        { rpc: await freePort(), ops: await freePort() },
      ]),
    ),
  );
  // Each process its own key pair, made for the run, and (the planes) its schema's role.
  const keys = generateServiceKeySet();
  const env = {
    ...process.env,
    NODE_ENV: "production",
    LOG_LEVEL: "warn",
    DATABASE_URL: databaseUrl.toString(),
    JWT_SECRET: randomBytes(32).toString("hex"),
    // The webhooks plane seals endpoint secrets at rest and, in production, will not start without it.
    WEBHOOK_SECRETS_KEYS: `bench:${randomBytes(32).toString("hex")}`,
    SERVICE_PUBLIC_KEYS: keys.public,
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
      SERVICE_KEY: keys.private[name],
      DATABASE_URL: schemaRoleUrl(databaseUrl.toString(), name),
      ...authorization.credentials(name),
    });
  }
  startProcess("gateway", ["services/gateway/dist/main.js"], {
    ...env,
    PORT: String(ports.gateway.rpc),
    OPS_PORT: String(ports.gateway.ops),
    SERVICE_KEY: keys.private.gateway,
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
    // The run's NATS server as the bench's own user (C3 fills the events stream itself).
    nats: { url: nats.url, ...authorization.harness },
  };
  await waitFor(`http://127.0.0.1:${ports.gateway.ops}/readyz`, "the gateway");
  await waitFor(`${urls.hello}/hello`, "the hello server");
  await waitFor(`${urls.receiver}/stats`, "the receiver");
  return urls;
}

/**
 * Finds the run's Postgres cluster (the parent of a backend of ours: its postmaster) and NATS
 * server (the nats-server listening on `natsPort`), whose CPU cpu.mjs reads as process trees.
 */
async function measureTrees(natsPort) {
  const postmaster = await withClient(adminUrl, async (admin) => {
    const { rows } = await admin.query("SELECT pg_backend_pid() AS pid");
    // Read while the backend lives: once the connection ends its /proc entry goes, and with it
    // the way to its postmaster. A cluster on another machine has no process here to read.
    return parentPid(rows[0].pid);
  });
  if (postmaster !== null && readComm(postmaster) === "postgres") trees.set("postgres", postmaster);
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || readComm(entry) !== "nats-server") continue;
    const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
    if (cmdline.includes(natsPort) || cmdline.some((arg) => arg.endsWith(`:${natsPort}`))) {
      trees.set("nats", Number(entry));
    }
  }
}

function readComm(pid) {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return null;
  }
}

/**
 * Whether the server runs autovacuum. A CI machine's server may not (its test databases live
 * minutes); production's does, and without it each round leaves the next one more dead rows to
 * step over (C2's deliveries, the outboxes), so a case's rate slides from round to round.
 */
export async function autovacuumIsOn() {
  const { rows } = await withClient(adminUrl, (admin) => admin.query("SHOW autovacuum"));
  return rows[0].autovacuum === "on";
}

/** Vacuums and analyzes the run's database: between rounds, what autovacuum would have done. */
export async function vacuumDatabase() {
  await withClient(databaseUrl, (client) => client.query("VACUUM (ANALYZE)"));
}

/** Runs `use` on a connection of its own to `url`, closed after it however `use` ends. */
async function withClient(url, use) {
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

/** Stops every process, drops the run's database and stops its NATS server. */
export async function cleanUp() {
  await stopAll();
  await withClient(adminUrl, (admin) =>
    admin.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`).catch(() => {}),
  );
  await nats?.close();
}

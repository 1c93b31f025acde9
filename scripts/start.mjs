// Starts the whole platform on one machine: makes sure PostgreSQL, Redis and NATS answer (where
// nothing does at a loopback DATABASE_URL, REDIS_URL or NATS_URL, a private server is started
// there with its data under VAR_DIR), migrates, then runs the four services and the gateway as
// separate processes (as they run in production), forwarding their logs, and prints the gateway
// URLs once they are ready. Ctrl-C (or SIGTERM) stops them all gracefully, then the private
// servers.
//
// REPLICAS=<n> (default 1) starts n of every process, as a fleet runs them: the gateways on PORT,
// PORT+1, …; each service's replicas on ports of their own (control 8181, 8191, …; platform
// 8182, 8192, …; ops ports 9181, 9191, …; the gateways' ops ports 9180, 9190, …), every caller given the list of a service's replicas
// (CONTROL_URL=http://127.0.0.1:8181,http://127.0.0.1:8191, …), over which it spreads its calls.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { directDatabaseUrl, loadConfig, schemaRoleUrl } from "@evalp/kit";
import { ensureServers, ServerNotInstalledError, UnreachableServerError } from "@evalp/local-servers";
import { migrateAll } from "./migrate.mjs";

/** A setting from the environment (read by name; none of them affect a build). */
const setting = (name) => process.env[name];
const replicas = Number(setting("REPLICAS") ?? "1");
if (!Number.isInteger(replicas) || replicas < 1 || replicas > 9) {
  console.error(`REPLICAS must be a whole number from 1 to 9 (got "${setting("REPLICAS")}")`);
  process.exit(2);
}
// Loaded once here, so that a development secret and the processes' key pairs (VAR_DIR) are
// generated once for every process.
const config = loadConfig();

const children = new Map();
let stopping = false;
/** The private servers started for this run (none when every server already answered). */
let servers;

/** Once the platform's processes are gone: the private servers stop, then this process exits. */
async function finish() {
  try {
    await servers?.stop();
  } catch (error) {
    console.error(`stopping the private servers failed: ${error.message}`);
    process.exitCode = 1;
  }
  process.exit(process.exitCode ?? 0);
}

function stop(code) {
  if (stopping) return;
  stopping = true;
  process.exitCode = code;
  for (const child of children.values()) child.kill("SIGTERM");
  // While the servers are still being started, finishing waits for them (below).
  if (children.size === 0 && servers) void finish();
}
process.on("SIGINT", () => stop(0));
process.on("SIGTERM", () => stop(0));

try {
  servers = await ensureServers({
    databaseUrl: config.DATABASE_URL,
    redisUrl: config.REDIS_URL,
    natsUrl: config.NATS_URL,
    varDir: config.VAR_DIR,
    log: (line) => console.error(line),
  });
} catch (error) {
  // What to install or which setting to fix: one line, no stack trace.
  if (error instanceof ServerNotInstalledError || error instanceof UnreachableServerError) {
    console.error(error.message);
    process.exit(1);
  }
  throw error;
}
if (stopping) await finish();
try {
  await migrateAll(directDatabaseUrl(config));
} catch (error) {
  console.error("migrating the database failed:", error);
  process.exitCode = 1;
  await finish();
}
if (stopping) await finish();

const root = fileURLToPath(new URL("..", import.meta.url));
/** The services, with the ports a single replica listens on by default. */
const SERVICES = [
  { name: "control", rpc: 8081, ops: 9081 },
  { name: "platform", rpc: 8082, ops: 9082 },
  { name: "interview", rpc: 8083, ops: 9083 },
  { name: "webhooks", rpc: 8084, ops: 9084 },
];

/** What each process is started with: its name, label and environment of its own. */
function plan() {
  if (replicas === 1) {
    // One of each, on the configured (or default) ports, exactly as before.
    return {
      processes: [
        ...SERVICES.map(({ name }) => ({ name, label: name, env: {} })),
        { name: "gateway", label: "gateway", env: {} },
      ],
      gateways: [{ url: `http://${config.HOST}:${config.PORT}`, ops: config.OPS_PORT ?? 9080 }],
      shared: {},
    };
  }
  const shared = { PUBLIC_URL: config.PUBLIC_URL };
  const processes = [];
  for (const service of SERVICES) {
    const urls = [];
    for (let i = 0; i < replicas; i++) {
      const rpc = service.rpc + 100 + 10 * i;
      const ops = service.ops + 100 + 10 * i;
      urls.push(`http://127.0.0.1:${rpc}`);
      processes.push({
        name: service.name,
        label: `${service.name}-${i + 1}`,
        env: { SERVICE_PORT: String(rpc), OPS_PORT: String(ops) },
      });
    }
    shared[`${service.name.toUpperCase()}_URL`] = urls.join(",");
  }
  const gateways = [];
  for (let i = 0; i < replicas; i++) {
    const port = config.PORT + i;
    // Beside the services' ops ports (9181 + 10 i, …): 9180 + 10 i.
    const ops = 9180 + 10 * i;
    gateways.push({ url: `http://${config.HOST}:${port}`, ops });
    processes.push({
      name: "gateway",
      label: `gateway-${i + 1}`,
      env: { PORT: String(port), OPS_PORT: String(ops) },
    });
  }
  return { processes, gateways, shared };
}

const { processes, gateways, shared } = plan();

/**
 * Each plane connects as its schema's role (created by the migrations), as in production: the
 * configured URL with the role's name and no password, for a server that trusts local
 * connections (the private one does); `<PLANE>_DATABASE_URL` names another (with a password).
 */
function databaseOf(name) {
  if (name === "gateway") return {};
  const own = setting(`${name.toUpperCase()}_DATABASE_URL`);
  return {
    DATABASE_URL: own ?? schemaRoleUrl(config.DATABASE_URL, name),
    ...(config.DATABASE_DIRECT_URL && !own
      ? { DATABASE_DIRECT_URL: schemaRoleUrl(config.DATABASE_DIRECT_URL, name) }
      : {}),
  };
}

for (const { name, label, env } of processes) {
  const child = spawn(process.execPath, [`services/${name}/dist/main.js`], {
    cwd: root,
    env: { ...process.env, ...shared, ...databaseOf(name), ...env },
    stdio: ["ignore", "inherit", "inherit"],
  });
  children.set(label, child);
  child.on("exit", (code, signal) => {
    children.delete(label);
    if (!stopping) {
      console.error(`${label} exited (${signal ?? code}); stopping the platform`);
      stop(1);
    } else if (children.size === 0) void finish();
  });
}

// A gateway's readiness is on its ops port.
const ready = (gateway) =>
  fetch(`http://127.0.0.1:${gateway.ops}/readyz`)
    .then((r) => r.ok)
    .catch(() => false);
for (let attempt = 0; attempt < 150 && !stopping; attempt++) {
  if ((await Promise.all(gateways.map(ready))).every(Boolean)) {
    const listed =
      gateways.length === 1 ? config.PUBLIC_URL : `\n  ${gateways.map((g) => g.url).join("\n  ")}\n`;
    console.error(`\nevalp is ready: ${listed}  (API docs: ${config.PUBLIC_URL}/docs)\n`);
    break;
  }
  await new Promise((resolve) => setTimeout(resolve, 200));
}

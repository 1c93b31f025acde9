// Starts the whole platform on one machine: migrates, then runs the four services and the
// gateway as separate processes (as they run in production), forwarding their logs, and
// prints the gateway URL once it is ready. Ctrl-C (or SIGTERM) stops them all gracefully.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { loadConfig } from "@evalp/kit";
import { migrateAll } from "./migrate.mjs";

const config = loadConfig();
await migrateAll(config.DATABASE_URL);

const root = fileURLToPath(new URL("..", import.meta.url));
const services = ["control", "platform", "interview", "webhooks", "gateway"];
const children = new Map();
let stopping = false;

for (const name of services) {
  const child = spawn(process.execPath, [`services/${name}/dist/main.js`], {
    cwd: root,
    env: process.env,
    stdio: ["ignore", "inherit", "inherit"],
  });
  children.set(name, child);
  child.on("exit", (code, signal) => {
    children.delete(name);
    if (!stopping) {
      console.error(`${name} exited (${signal ?? code}); stopping the platform`);
      stop(1);
    } else if (children.size === 0) process.exit(process.exitCode ?? 0);
  });
}

function stop(code) {
  if (stopping) return;
  stopping = true;
  process.exitCode = code;
  for (const child of children.values()) child.kill("SIGTERM");
  if (children.size === 0) process.exit(code);
}
process.on("SIGINT", () => stop(0));
process.on("SIGTERM", () => stop(0));

const readyz = `http://${config.HOST}:${config.PORT}/readyz`;
for (let attempt = 0; attempt < 150 && !stopping; attempt++) {
  const ready = await fetch(readyz)
    .then((r) => r.ok)
    .catch(() => false);
  if (ready) {
    console.error(`\nevalp is ready: ${config.PUBLIC_URL}  (API docs: ${config.PUBLIC_URL}/docs)\n`);
    break;
  }
  await new Promise((resolve) => setTimeout(resolve, 200));
}

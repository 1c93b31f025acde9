import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { createTestDatabase, type TestDatabase, uniqueRedisPrefix, uniqueSuffix } from "@evalp/testing";
import { afterAll, describe, expect, it, vi } from "vitest";
import { dropStreams, MIGRATIONS, streamNames } from "./support/stack.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SERVICES = ["control", "platform", "interview", "webhooks"] as const;

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, "close");
  return port;
}

const children: ChildProcess[] = [];
let database: TestDatabase | undefined;
// Streams of this test's own on the shared NATS server, removed afterwards.
const streams = streamNames(uniqueSuffix());

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
  await database?.drop();
  await dropStreams(streams);
});

describe("the processes, as npm start runs them", () => {
  it("boot with their ops ports, serve a request end to end, and exit 0 on SIGTERM", async () => {
    database = await createTestDatabase(MIGRATIONS);
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      NODE_ENV: "test",
      LOG_LEVEL: "warn",
      DATABASE_URL: database.url,
      REDIS_KEY_PREFIX: uniqueRedisPrefix(),
      JWT_SECRET: "process-test-secret-process-test-secret-0123",
      ...streams,
    };
    const stderr: string[] = [];
    const ports: Record<string, { rpc: number; ops: number }> = {};
    for (const name of SERVICES) ports[name] = { rpc: await freePort(), ops: await freePort() };
    for (const name of SERVICES) env[`${name.toUpperCase()}_URL`] = `http://127.0.0.1:${ports[name]?.rpc}`;
    const gatewayPort = await freePort();

    const start = (name: string, extra: Record<string, string>) => {
      const child = spawn(process.execPath, [`services/${name}/dist/main.js`], {
        cwd: ROOT,
        env: { ...env, ...extra },
        stdio: ["ignore", "ignore", "pipe"],
      });
      children.push(child);
      child.stderr?.on("data", (chunk: Buffer) => stderr.push(`${name}: ${chunk.toString()}`));
      return child;
    };
    const services = SERVICES.map((name) =>
      start(name, { SERVICE_PORT: String(ports[name]?.rpc), OPS_PORT: String(ports[name]?.ops) }),
    );
    const gateway = start("gateway", { PORT: String(gatewayPort) });
    const base = `http://127.0.0.1:${gatewayPort}`;

    await vi.waitFor(
      async () => {
        const ready = await fetch(`${base}/readyz`);
        expect(ready.status).toBe(200);
      },
      { timeout: 20_000, interval: 200 },
    );
    for (const name of SERVICES) {
      const ops = `http://127.0.0.1:${ports[name]?.ops}`;
      expect((await fetch(`${ops}/healthz`)).status).toBe(200);
      expect((await fetch(`${ops}/readyz`)).status).toBe(200);
      expect(await (await fetch(`${ops}/metrics`)).text()).toContain(`service="${name}"`);
    }
    const signup = await fetch(`${base}/auth/signup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "proc@example.com", password: "password123", organization_name: "Proc" }),
    });
    expect(signup.status).toBe(201);

    const all = [gateway, ...services];
    const exits = all.map((child) => once(child, "exit") as Promise<[number | null, string | null]>);
    for (const child of all) child.kill("SIGTERM");
    const codes = await Promise.all(exits);
    expect(
      codes.map(([code]) => code),
      stderr.join("\n"),
    ).toEqual([0, 0, 0, 0, 0]);
  }, 40_000);
});

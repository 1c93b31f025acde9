import type { ServerHttp2Session } from "node:http2";
import { createServer } from "node:net";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { HealthService } from "@evalp/proto/common/v1/health";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { callerTable } from "./auth/service-callers.js";
import { generateServiceKeySet, signServiceTokens } from "./auth/service-tokens.js";
import { keySetConfig, serviceVerifier } from "./config/config.js";
import { createH2Transport } from "./connect-h2-transport.js";
import { neverReached, transportFailure } from "./peer-outage.js";
import { serviceCaller, WIRE_READ_OPTIONS } from "./rpc/connect-client.js";
import { type ConnectServer, createConnectServer, listen } from "./rpc/connect-server.js";

const KEYS = keySetConfig(generateServiceKeySet(["test"]));
const caller = serviceCaller(KEYS, "test");
const running: ConnectServer[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.close()));
});

/** A replica with HealthService, counting the connections it was opened and closed; `hold` keeps its Check waiting. */
async function replica(maxConnectionAgeMs = 0, hold?: Promise<void>) {
  const rpc = createConnectServer({
    routes: () => {},
    logger: pino({ level: "silent" }),
    checks: hold ? [{ name: "held", check: () => hold }] : [],
    tokens: serviceVerifier(KEYS, "peer"),
    callers: callerTable({}),
    maxConnectionAgeMs,
  });
  const connections = { opened: 0, open: 0 };
  rpc.server.on("session", (session: ServerHttp2Session) => {
    connections.opened += 1;
    connections.open += 1;
    session.on("close", () => {
      connections.open -= 1;
    });
  });
  running.push(rpc);
  const port = await listen(rpc.server, 0, "127.0.0.1");
  return { url: `http://127.0.0.1:${port}`, connections, rpc };
}

const transportTo = (url: string, idleConnectionMs = 60_000) =>
  createH2Transport({
    baseUrl: url,
    defaultTimeoutMs: 5_000,
    interceptors: [signServiceTokens(caller, "peer")],
    idleConnectionMs,
    ...WIRE_READ_OPTIONS,
  });

async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("createH2Transport", () => {
  it("shares one connection between calls, and opens another when the server sends it away", async () => {
    const server = await replica(150);
    const client = createClient(HealthService, transportTo(server.url));
    await Promise.all(Array.from({ length: 20 }, () => client.check({})));
    expect(server.connections.opened).toBe(1);
    // Calls keep coming while the server closes aged connections (GOAWAY): none fails.
    const until = Date.now() + 600;
    let calls = 0;
    while (Date.now() < until) {
      await Promise.all([client.check({}), client.check({})]);
      calls += 2;
    }
    expect(calls).toBeGreaterThan(0);
    expect(server.connections.opened).toBeGreaterThan(1);
  });

  it("closes a connection that carried no call for its idle time", async () => {
    const server = await replica();
    const client = createClient(HealthService, transportTo(server.url, 100));
    await client.check({});
    expect(server.connections.open).toBe(1);
    await waitFor(() => server.connections.open === 0);
    // The next call connects again.
    expect((await client.check({})).ready).toBe(true);
    expect(server.connections.opened).toBe(2);
  });

  it("reports a refused connection as unavailable, never having reached the peer", async () => {
    const probe = createServer().listen(0, "127.0.0.1");
    await new Promise((resolve) => probe.once("listening", resolve));
    const { port } = probe.address() as { port: number };
    await new Promise((resolve) => probe.close(resolve));
    const client = createClient(HealthService, transportTo(`http://127.0.0.1:${port}`));
    const error = await client.check({}).catch((reason: unknown) => reason);
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as ConnectError).code).toBe(Code.Unavailable);
    expect(transportFailure(error)).toBe("unavailable");
    expect(neverReached(error)).toBe(true);
  });

  it("closes its connection when told to, and connects again for the next call", async () => {
    const server = await replica();
    const transport = transportTo(server.url);
    const client = createClient(HealthService, transport);
    await client.check({});
    transport.close();
    await waitFor(() => server.connections.open === 0);
    expect((await client.check({})).ready).toBe(true);
    expect(server.connections.opened).toBe(2);
  });

  it("is closed gracefully by the server: the call in flight finishes, the next one finds no server", async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const server = await replica(0, held);
    const client = createClient(HealthService, transportTo(server.url));
    const inFlight = client.check({});
    await waitFor(() => server.connections.open === 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const closed = server.rpc.close();
    release();
    expect((await inFlight).ready).toBe(true);
    await closed;
    await waitFor(() => server.connections.open === 0);
    const error = await client.check({}).catch((reason: unknown) => reason);
    expect(transportFailure(error)).toBe("unavailable");
    expect(neverReached(error)).toBe(true);
  });
});

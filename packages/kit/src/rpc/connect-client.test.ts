import http2, { type ServerHttp2Session } from "node:http2";
import { createServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { HealthService } from "@evalp/proto/common/v1/health";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { callerTable } from "../auth/service-callers.js";
import { generateServiceKeySet } from "../auth/service-tokens.js";
import { keySetConfig, serviceVerifier } from "../config/config.js";
import { createServiceTransport, serviceCaller } from "./connect-client.js";
import { type ConnectServer, createConnectServer, listen } from "./connect-server.js";

const logger = pino({ level: "silent" });
const KEYS = keySetConfig(generateServiceKeySet(["test"]));
const caller = serviceCaller(KEYS, "test");
const running: ConnectServer[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.close()));
});

/** A replica serving HealthService.Check, counting its calls; `hold` keeps a call waiting. */
async function replica(options: { hold?: Promise<void> } = {}) {
  const calls = { count: 0 };
  const rpc = createConnectServer({
    routes: () => {},
    logger,
    tokens: serviceVerifier(KEYS, "peer"),
    callers: callerTable({}),
    checks: [
      {
        name: "counted",
        check: async () => {
          calls.count += 1;
          await options.hold;
        },
      },
    ],
  });
  const sessions = new Set<ServerHttp2Session>();
  rpc.server.on("session", (session) => sessions.add(session));
  running.push(rpc);
  const port = await listen(rpc.server, 0, "127.0.0.1");
  /** The process dies: its connections end under the calls they carry. */
  const die = () => {
    rpc.server.close();
    for (const session of sessions) session.destroy();
  };
  return { calls, die, url: `http://127.0.0.1:${port}` };
}

/** A replica whose HTTP/2 server resets every stream with `rstCode`, counting them. */
async function resetting(rstCode: number) {
  const streams = { count: 0 };
  const server = http2.createServer();
  server.on("stream", (stream) => {
    streams.count += 1;
    stream.on("error", () => {});
    stream.close(rstCode);
  });
  const sessions = new Set<ServerHttp2Session>();
  server.on("session", (session) => sessions.add(session));
  const port = await listen(server, 0, "127.0.0.1");
  running.push({
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const session of sessions) session.destroy();
      }),
  });
  return { streams, url: `http://127.0.0.1:${port}` };
}

/** A port nothing listens on: connections to it are refused. */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("createServiceTransport", () => {
  it("spreads calls over every replica an address lists", async () => {
    const [a, b] = [await replica(), await replica()];
    const client = createClient(
      HealthService,
      createServiceTransport("peer", () => `${a.url},${b.url}`, 5_000, caller),
    );
    await Promise.all(Array.from({ length: 20 }, () => client.check({})));
    expect(a.calls.count).toBe(10);
    expect(b.calls.count).toBe(10);
  });

  it("sends a call whose connection was refused to another replica, whatever the method", async () => {
    const live = await replica();
    const refused = `http://127.0.0.1:${await closedPort()}`;
    const transport = createServiceTransport("peer", () => `${refused},${live.url}`, 5_000, caller);
    const write = {
      ...HealthService.method.check,
      idempotency: MethodOptions_IdempotencyLevel.IDEMPOTENCY_UNKNOWN,
    };
    for (let i = 0; i < 4; i++) {
      const answer = await transport.unary(write, undefined, undefined, undefined, {});
      expect(answer.message.ready).toBe(true);
    }
    expect(live.calls.count).toBe(4);
  });

  it("sends a write whose stream a replica refused unprocessed (REFUSED_STREAM) to another, never one it reset otherwise", async () => {
    const live = await replica();
    const write = {
      ...HealthService.method.check,
      idempotency: MethodOptions_IdempotencyLevel.IDEMPOTENCY_UNKNOWN,
    };
    const refusing = await resetting(http2.constants.NGHTTP2_REFUSED_STREAM);
    const refusedFirst = createServiceTransport("peer", () => `${refusing.url},${live.url}`, 5_000, caller);
    for (let i = 0; i < 3; i++) {
      expect((await refusedFirst.unary(write, undefined, undefined, undefined, {})).message.ready).toBe(true);
    }
    expect(live.calls.count).toBe(3);
    // Refused, and sent once more on the replica's connection before the next replica is tried.
    expect(refusing.streams.count).toBe(2);

    // A stream canceled may have run: the write fails rather than running twice.
    const canceling = await resetting(http2.constants.NGHTTP2_CANCEL);
    const canceledFirst = createServiceTransport("peer", () => `${canceling.url},${live.url}`, 5_000, caller);
    const error = await canceledFirst
      .unary(write, undefined, undefined, undefined, {})
      .catch((reason) => reason);
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as ConnectError).code).toBe(Code.Canceled);
    expect(live.calls.count).toBe(3);
    expect(canceling.streams.count).toBe(1);
  });

  it("retries a read that a replica dropped mid-call on another, never a write", async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const dying = await replica({ hold: held });
    const live = await replica();
    // Each transport's first call goes to the first replica listed: the dying one.
    const readTransport = createServiceTransport("peer", () => `${dying.url},${live.url}`, 5_000, caller);
    const writeTransport = createServiceTransport("peer", () => `${dying.url},${live.url}`, 5_000, caller);
    const read = HealthService.method.check;
    expect(read.idempotency).toBe(MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS);
    const write = { ...read, idempotency: MethodOptions_IdempotencyLevel.IDEMPOTENCY_UNKNOWN };

    const readCall = readTransport.unary(read, undefined, undefined, undefined, {});
    const writeCall = writeTransport
      .unary(write, undefined, undefined, undefined, {})
      .catch((error) => error);
    await waitFor(() => dying.calls.count === 2);
    dying.die();
    release();

    expect((await readCall).message.ready).toBe(true);
    const writeError = await writeCall;
    expect(writeError).toBeInstanceOf(ConnectError);
    expect([Code.Unavailable, Code.Aborted, Code.Canceled]).toContain((writeError as ConnectError).code);
    // The read ran again on the live replica; the write ran once, on the replica that died.
    expect(live.calls.count).toBe(1);
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await sleep(5);
  }
}

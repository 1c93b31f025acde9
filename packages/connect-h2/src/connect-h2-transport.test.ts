import http2 from "node:http2";
import net from "node:net";
import { create, toBinary } from "@bufbuild/protobuf";
import { StringValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, createClient, type Interceptor } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { createH2Transport, type H2TransportOptions } from "./connect-h2-transport.js";
import { PING_TIMEOUT } from "./h2-errors.js";
import { neverReached, transportFailure } from "./peer-failure.js";
import { type EchoServer, EchoService, failure, serve, waitFor } from "./test-echo.js";

const WIRE = { binaryOptions: { recursionLimit: 512 }, jsonOptions: { recursionLimit: 512 } };
const running: { close(): Promise<void> }[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.close()));
});

async function server(...args: Parameters<typeof serve>): Promise<EchoServer> {
  const started = await serve(...args);
  running.push(started);
  return started;
}

const transportTo = (url: string, options: Partial<H2TransportOptions> = {}) =>
  createH2Transport({
    baseUrl: url,
    defaultTimeoutMs: 5_000,
    interceptors: [],
    idleConnectionMs: 60_000,
    ...WIRE,
    ...options,
  });

/** Answers a stream as a Connect server answers `Say`: status 200, the StringValue in binary. */
function answer(stream: http2.ServerHttp2Stream, value: string) {
  if (stream.destroyed) return;
  stream.respond({ ":status": 200, "content-type": "application/proto" });
  stream.end(toBinary(StringValueSchema, create(StringValueSchema, { value })));
}

/** The `code` of an error and of each of its causes. */
function codesOf(error: unknown): unknown[] {
  const codes: unknown[] = [];
  for (let cause = error; cause instanceof Error; cause = cause.cause) codes.push(Reflect.get(cause, "code"));
  return codes;
}

/** A port nothing listens on: connections to it are refused. */
async function closedPort(): Promise<number> {
  const probe = net.createServer().listen(0, "127.0.0.1");
  await new Promise((resolve) => probe.once("listening", resolve));
  const address = probe.address();
  if (!address || typeof address === "string") throw new Error("no port");
  await new Promise((resolve) => probe.close(resolve));
  return address.port;
}

/**
 * A TCP relay in front of `port` that can go silent: once frozen it keeps every socket open and
 * passes nothing more either way (a peer hung, or its host gone without a reset).
 */
async function relay(port: number) {
  const sockets = new Set<net.Socket>();
  const state = { frozen: false, accepted: 0 };
  const proxy = net.createServer((client) => {
    state.accepted += 1;
    const upstream = net.connect(port, "127.0.0.1");
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("error", () => {});
      socket.on("close", () => sockets.delete(socket));
    }
    client.on("data", (data) => state.frozen || upstream.write(data));
    upstream.on("data", (data) => state.frozen || client.write(data));
    client.on("end", () => upstream.end());
    upstream.on("end", () => client.end());
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const address = proxy.address();
  if (!address || typeof address === "string") throw new Error("no port");
  running.push({
    close: () =>
      new Promise((resolve) => {
        proxy.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  });
  return { url: `http://127.0.0.1:${address.port}`, state };
}

describe("createH2Transport's connection", () => {
  it("is shared between calls, and opened again when the server sends it away", async () => {
    const peer = await server("ours", { maxConnectionAgeMs: 150 });
    const client = createClient(EchoService, transportTo(peer.url));
    await Promise.all(Array.from({ length: 20 }, (_, i) => client.say({ value: String(i) })));
    expect(peer.connections.opened).toBe(1);
    // Calls keep coming while the server closes aged connections (GOAWAY): none fails.
    const until = Date.now() + 600;
    let calls = 0;
    while (Date.now() < until) {
      await Promise.all([client.say({ value: "a" }), client.say({ value: "b" })]);
      calls += 2;
    }
    expect(calls).toBeGreaterThan(0);
    expect(peer.connections.opened).toBeGreaterThan(1);
  });

  it("is closed once it carried no call for its idle time, and opened again by the next call", async () => {
    const peer = await server("ours");
    const client = createClient(EchoService, transportTo(peer.url, { idleConnectionMs: 100 }));
    await client.say({ value: "hello" });
    expect(peer.connections.open).toBe(1);
    await waitFor(() => peer.connections.open === 0);
    expect((await client.say({ value: "again" })).value).toBe("you said again");
    expect(peer.connections.opened).toBe(2);
  });

  it("is closed when told to, and opened again by the next call", async () => {
    const peer = await server("ours");
    const transport = transportTo(peer.url);
    const client = createClient(EchoService, transport);
    await client.say({ value: "hello" });
    transport.close();
    await waitFor(() => peer.connections.open === 0);
    expect((await client.say({ value: "again" })).value).toBe("you said again");
    expect(peer.connections.opened).toBe(2);
  });

  it("is closed gracefully by the server: the call in flight finishes, the next one finds no server", async () => {
    let received = 0;
    const peer = await server((stream) => {
      received += 1;
      setTimeout(() => answer(stream, "late"), 150);
    });
    const client = createClient(EchoService, transportTo(peer.url));
    const inFlight = client.say({ value: "hello" });
    // Sent away before the server had the stream, the call would be refused and sent again.
    await waitFor(() => received === 1);
    const closed = peer.close(true);
    expect((await inFlight).value).toBe("late");
    await closed;
    const error = await failure(client.say({ value: "again" }));
    expect(transportFailure(error)).toBe("unavailable");
    expect(neverReached(error)).toBe(true);
  });
});

describe("a peer that stops answering", () => {
  it("is found out by an unanswered PING: its calls fail as unavailable long before their deadline, the next call connects again", async () => {
    const peer = await server("ours");
    const line = await relay(Number(new URL(peer.url).port));
    const client = createClient(
      EchoService,
      transportTo(line.url, { defaultTimeoutMs: 30_000, pingIntervalMs: 100, pingTimeoutMs: 200 }),
    );
    expect((await client.say({ value: "hello" })).value).toBe("you said hello");
    line.state.frozen = true;
    const started = performance.now();
    const error = await failure(client.say({ value: "anyone there?" }));
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(error.code).toBe(Code.Unavailable);
    expect(transportFailure(error)).toBe("unavailable");
    expect(codesOf(error)).toContain(PING_TIMEOUT);
    // The request may have been read before the peer went silent: no proof it never ran.
    expect(neverReached(error)).toBe(false);
    line.state.frozen = false;
    expect((await client.say({ value: "back" })).value).toBe("you said back");
    expect(line.state.accepted).toBe(2);
  });

  it("that never answered at all (the socket accepted, nothing said) is given up by the PING timeout too", async () => {
    const sockets = new Set<net.Socket>();
    const mute = net.createServer((socket) => {
      sockets.add(socket);
      socket.on("error", () => {});
    });
    await new Promise<void>((resolve) => mute.listen(0, "127.0.0.1", resolve));
    running.push({
      close: () =>
        new Promise((resolve) => {
          mute.close(() => resolve());
          for (const socket of sockets) socket.destroy();
        }),
    });
    const address = mute.address();
    if (!address || typeof address === "string") throw new Error("no port");
    const client = createClient(
      EchoService,
      transportTo(`http://127.0.0.1:${address.port}`, {
        defaultTimeoutMs: 30_000,
        pingIntervalMs: 100,
        pingTimeoutMs: 200,
      }),
    );
    const started = performance.now();
    const error = await failure(client.say({ value: "hello" }));
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(transportFailure(error)).toBe("unavailable");
    expect(codesOf(error)).toContain(PING_TIMEOUT);
  });
});

describe("a stream the server refuses (REFUSED_STREAM)", () => {
  it("is sent once more, and answered when the server takes it then", async () => {
    let seen = 0;
    const peer = await server((stream) => {
      seen += 1;
      if (seen === 1) stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      else answer(stream, "taken");
    });
    const client = createClient(EchoService, transportTo(peer.url));
    expect((await client.say({ value: "hello" })).value).toBe("taken");
    expect(seen).toBe(2);
  });

  it("refused again is unavailable and provably never reached the peer: sent once more only", async () => {
    let seen = 0;
    const peer = await server((stream) => {
      seen += 1;
      stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
    });
    const client = createClient(EchoService, transportTo(peer.url));
    const error = await failure(client.say({ value: "hello" }));
    expect(error.code).toBe(Code.Unavailable);
    expect(transportFailure(error)).toBe("unavailable");
    expect(neverReached(error)).toBe(true);
    expect(seen).toBe(2);
  });
});

describe("a stream the server resets", () => {
  const { constants } = http2;
  it.each([
    ["CANCEL", constants.NGHTTP2_CANCEL, Code.Canceled],
    ["INTERNAL_ERROR", constants.NGHTTP2_INTERNAL_ERROR, Code.Internal],
    ["PROTOCOL_ERROR", constants.NGHTTP2_PROTOCOL_ERROR, Code.Internal],
    ["ENHANCE_YOUR_CALM", constants.NGHTTP2_ENHANCE_YOUR_CALM, Code.ResourceExhausted],
    ["HTTP_1_1_REQUIRED", constants.NGHTTP2_HTTP_1_1_REQUIRED, Code.PermissionDenied],
  ])("with %s fails with its Connect code, and may have reached the peer", async (name, rstCode, code) => {
    const peer = await server((stream) => {
      stream.on("data", () => {});
      stream.on("end", () => stream.close(rstCode));
    });
    const error = await failure(createClient(EchoService, transportTo(peer.url)).say({ value: name }));
    expect(error.code).toBe(code);
    expect(codesOf(error)).toContain(`NGHTTP2_${name}`);
    expect(neverReached(error)).toBe(false);
  });

  it("with its connection reset under it (ECONNRESET) is aborted, and may have reached the peer", async () => {
    const peer = await server((stream) => {
      stream.on("data", () => {});
      stream.on("end", () => {
        for (const socket of sockets) socket.resetAndDestroy();
      });
    });
    const sockets = new Set<net.Socket>();
    peer.server.on("connection", (socket: net.Socket) => sockets.add(socket));
    const error = await failure(createClient(EchoService, transportTo(peer.url)).say({ value: "hello" }));
    expect(error.code).toBe(Code.Aborted);
    expect(codesOf(error)).toContain("ECONNRESET");
    expect(transportFailure(error)).toBe("unavailable");
    expect(neverReached(error)).toBe(false);
  });

  it("refused at connection (ECONNREFUSED) is unavailable, never having reached the peer", async () => {
    const client = createClient(EchoService, transportTo(`http://127.0.0.1:${await closedPort()}`));
    const error = await failure(client.say({ value: "hello" }));
    expect(error.code).toBe(Code.Unavailable);
    expect(codesOf(error)).toContain("ECONNREFUSED");
    expect(neverReached(error)).toBe(true);
  });
});

/**
 * An interceptor that hands on a request of its own making, with only the fields connect declares
 * (as one that copies a request field by field does): nothing the transport hid elsewhere survives.
 */
const rebuilds: Interceptor = (next) => (req) =>
  next(
    req.stream
      ? req
      : {
          stream: false,
          service: req.service,
          method: req.method,
          requestMethod: req.requestMethod,
          url: req.url,
          header: new Headers(req.header),
          contextValues: req.contextValues,
          message: req.message,
          signal: req.signal,
        },
  );

describe("a call's deadline and signal", () => {
  it("hold through an interceptor that rebuilds the request", async () => {
    const peer = await server("ours");
    const client = createClient(EchoService, transportTo(peer.url, { interceptors: [rebuilds] }));
    const started = performance.now();
    const late = await failure(client.say({ value: "wait:rebuilt-deadline" }, { timeoutMs: 200 }));
    expect(late.code).toBe(Code.DeadlineExceeded);
    expect(performance.now() - started).toBeLessThan(2_000);
    const controller = new AbortController();
    const call = client.say(
      { value: "wait:rebuilt-abort" },
      { signal: controller.signal, timeoutMs: 30_000 },
    );
    setTimeout(() => controller.abort(), 50);
    expect((await failure(call)).code).toBe(Code.Canceled);
  });

  it("are the call's own: a call without a signal shares none with another", async () => {
    const signals: AbortSignal[] = [];
    const records: Interceptor = (next) => (req) => {
      signals.push(req.signal);
      return next(req);
    };
    const peer = await server("ours");
    const client = createClient(EchoService, transportTo(peer.url, { interceptors: [records] }));
    await Promise.all([client.say({ value: "a" }), client.say({ value: "b" })]);
    expect(signals).toHaveLength(2);
    expect(signals[0]).not.toBe(signals[1]);
  });
});

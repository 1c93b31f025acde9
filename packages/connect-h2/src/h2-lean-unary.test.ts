import http2 from "node:http2";
import { create, toBinary } from "@bufbuild/protobuf";
import { StringValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createH2Transport } from "./connect-h2-transport.js";
import { isLeanUnary } from "./h2-lean-unary.js";
import { type EchoServer, EchoService, givenUp, kept, serve, waitFor } from "./test-echo.js";

/*
 * The server's lean path for unary binary Connect calls answers exactly as connect's router does:
 * every call here is sent twice on the wire, once as the platform's client sends it (the lean
 * path) and once with `accept-encoding: gzip` (which only the router serves; answers this small are
 * not compressed), and the two answers must be the same bytes, status and headers.
 */

const SAY = "/evalp.test.v1.EchoService/Say";
const READ_MAX_BYTES = 1_000;
/** The headers the platform's client sends for a unary call (checked below). */
const LEAN = { ":method": "POST", "content-type": "application/proto", "connect-protocol-version": "1" };
const ROUTER = { ...LEAN, "accept-encoding": "gzip" };

/** An interceptor as the services have: reads the request, adds to the answer, on either path. */
const stamp: Interceptor = (next) => async (req) => {
  const res = await next(req);
  res.header.set("x-interceptor", `${req.requestMethod} ${req.url.replace(/:\d+/, "")}`);
  res.trailer.set("x-seen", req.header.get("x-test") ?? "none");
  return res;
};

type Answer = { status: number; header: Record<string, unknown>; body: string };

/** One request on a connection of its own, answered or reset after `resetMs`. */
function call(
  url: string,
  headers: http2.OutgoingHttpHeaders,
  body: Uint8Array,
  resetMs?: number,
): Promise<Answer | "reset"> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(url);
    session.on("error", reject);
    const stream = session.request({ ":path": SAY, ...headers });
    const chunks: Buffer[] = [];
    let head: http2.IncomingHttpHeaders = {};
    stream.on("response", (incoming) => {
      head = incoming;
    });
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("error", () => {});
    stream.on("close", () => {
      session.close();
      if (resetMs !== undefined) return resolve("reset");
      const { ":status": status, date: _date, ...header } = head;
      resolve({ status: Number(status), header, body: Buffer.concat(chunks).toString("latin1") });
    });
    if (resetMs !== undefined) setTimeout(() => stream.close(http2.constants.NGHTTP2_CANCEL), resetMs);
    stream.end(body);
  });
}

const say = (value: string) => toBinary(StringValueSchema, create(StringValueSchema, { value }));

/** The answers of the lean path and the router to the same call, which must be the same. */
async function both(url: string, body: Uint8Array, headers: http2.OutgoingHttpHeaders = {}) {
  const lean = await call(url, { ...LEAN, ...headers }, body);
  const router = await call(url, { ...ROUTER, ...headers }, body);
  expect(lean).toEqual(router);
  if (lean === "reset") throw new Error("unreachable");
  return lean;
}

describe("isLeanUnary", () => {
  it("takes the platform client's unary calls", async () => {
    let seen: http2.IncomingHttpHeaders | undefined;
    const server = await serve((stream) => {
      stream.resume();
      stream.respond({ ":status": 200, "content-type": "application/proto" });
      stream.end(say("ok"));
    });
    server.server.on("stream", (_stream, headers) => {
      seen = headers;
    });
    const transport = createH2Transport({
      baseUrl: server.url,
      defaultTimeoutMs: 5_000,
      interceptors: [],
      idleConnectionMs: 60_000,
      binaryOptions: {},
      jsonOptions: {},
    });
    await createClient(EchoService, transport).say({ value: "hello" }, { headers: { "x-test": "1" } });
    transport.close();
    await server.close();
    expect(seen && isLeanUnary(seen)).toBe(true);
    expect(seen && isLeanUnary(seen, true)).toBe(true);
  });

  it.each([
    ["JSON", { "content-type": "application/json" }],
    ["a stream's content type", { "content-type": "application/connect+proto" }],
    ["gRPC", { "content-type": "application/grpc" }],
    ["GET", { ":method": "GET" }],
    ["a compressed request", { "content-encoding": "gzip" }],
    ["a caller that takes compressed answers", { "accept-encoding": "gzip, br" }],
    ["a declared length", { "content-length": "5" }],
  ])("leaves %s to the router", (_, headers) => {
    expect(isLeanUnary({ ...LEAN, ...headers })).toBe(false);
  });

  it("takes identity encodings, and leaves a missing protocol version to the router only when required", () => {
    expect(isLeanUnary({ ...LEAN, "content-encoding": "identity", "accept-encoding": "identity" })).toBe(
      true,
    );
    const { "connect-protocol-version": _, ...unversioned } = LEAN;
    expect(isLeanUnary(unversioned)).toBe(true);
    expect(isLeanUnary(unversioned, true)).toBe(false);
  });
});

describe("the lean path and the router", () => {
  let server: EchoServer;
  beforeAll(async () => {
    server = await serve("ours", { interceptors: [stamp], readMaxBytes: READ_MAX_BYTES });
  });
  afterAll(() => server.close());

  it("answer a call the same", async () => {
    const answer = await both(server.url, say("hello"), { "x-test": "sent" });
    expect(answer.status).toBe(200);
    expect(answer.header).toMatchObject({
      "content-type": "application/proto",
      "x-interceptor": "POST http://127.0.0.1/evalp.test.v1.EchoService/Say",
      "trailer-x-seen": "sent",
    });
    expect(answer.body).toBe(Buffer.from(say("you said hello")).toString("latin1"));
    // An empty body is the empty message.
    expect((await both(server.url, new Uint8Array())).body).toContain("you said ");
  });

  it("carry the implementation's response headers and trailers the same", async () => {
    const answer = await both(server.url, say("meta"), { "x-test": "sent" });
    expect(answer.header).toMatchObject({ "x-echo": "sent", "trailer-x-trailer": "after" });
  });

  it.each(Object.values(Code).filter((code): code is Code => typeof code === "number"))(
    "answer error code %i the same, with its details and metadata",
    async (code) => {
      const answer = await both(server.url, say(`code:${code}`));
      expect(answer.header).toMatchObject({ "content-type": "application/json", "x-error": `code ${code}` });
      const error = JSON.parse(answer.body) as { code: string; message: string; details: unknown[] };
      expect(error.message).toBe(`failed with ${code}.`);
      expect(error.details).toHaveLength(1);
    },
  );

  it("answer a failure that is no ConnectError the same (internal)", async () => {
    const answer = await both(server.url, say("throw"));
    expect(answer.status).toBe(500);
    expect(JSON.parse(answer.body)).toEqual({ code: "internal", message: "internal error" });
  });

  it("refuse a request larger than readMaxBytes the same", async () => {
    const answer = await both(server.url, say("x".repeat(READ_MAX_BYTES * 20)));
    expect(answer.status).toBe(429);
    expect(JSON.parse(answer.body)).toMatchObject({ code: "resource_exhausted" });
  });

  it("refuse a body that is no message, and a timeout that is no number, the same", async () => {
    // connect reads a body that does not parse as an internal error.
    const garbled = await both(server.url, new Uint8Array([0xff, 0xff, 0xff]));
    expect(JSON.parse(garbled.body)).toMatchObject({ code: "internal" });
    const timeout = await both(server.url, say("hello"), { "connect-timeout-ms": "soon" });
    expect(JSON.parse(timeout.body)).toMatchObject({ code: "invalid_argument" });
  });

  it("differ in what a call costs: the lean path makes one AbortController for a call with a deadline, the router three", async () => {
    const made = { count: 0 };
    const Original = globalThis.AbortController;
    globalThis.AbortController = class extends Original {
      constructor() {
        super();
        made.count += 1;
      }
    };
    const counted = async (headers: http2.OutgoingHttpHeaders) => {
      made.count = 0;
      await call(server.url, { ...headers, "connect-timeout-ms": "5000" }, say("hello"));
      return made.count;
    };
    try {
      expect(await counted(LEAN)).toBe(1);
      expect(await counted(ROUTER)).toBe(3);
    } finally {
      globalThis.AbortController = Original;
    }
  });

  it("answer a method the server does not have the same (404)", async () => {
    const path = "/evalp.test.v1.EchoService/Nope";
    const lean = await call(server.url, { ...LEAN, ":path": path }, say("hello"));
    const router = await call(server.url, { ...ROUTER, ":path": path }, say("hello"));
    expect(lean).toEqual(router);
    expect(lean).toMatchObject({ status: 404 });
  });

  it("give the implementation the deadline the caller sent, and abort its signal at it", async () => {
    for (const [kind, headers] of [
      ["lean", LEAN],
      ["router", ROUTER],
    ] as const) {
      const id = `deadline-${kind}`;
      const answer = await call(server.url, { ...headers, "connect-timeout-ms": "100" }, say(`wait:${id}`));
      // The implementation answers once its signal is aborted; the caller here did not give up.
      expect(answer).toMatchObject({ status: 200 });
      const seen = givenUp.get(id);
      expect(seen?.timeoutMs).toBeGreaterThan(0);
      expect(seen?.timeoutMs).toBeLessThanOrEqual(100);
      expect(ConnectError.from(seen?.reason)).toMatchObject({
        code: Code.DeadlineExceeded,
        rawMessage: "the operation timed out",
      });
    }
  });

  it("abort the implementation's signal once the call is answered, as AbortController.abort() does", async () => {
    for (const id of ["lean", "router"]) {
      await call(server.url, id === "lean" ? LEAN : ROUTER, say(`keep:${id}`));
      const reason: unknown = kept.get(id)?.reason;
      expect(kept.get(id)?.aborted).toBe(true);
      expect(reason).toBeInstanceOf(DOMException);
      expect(reason).toMatchObject({ name: "AbortError", message: "This operation was aborted" });
    }
  });

  it("abort the implementation's signal when the caller resets the call mid-way", async () => {
    for (const [kind, headers] of [
      ["lean", LEAN],
      ["router", ROUTER],
    ] as const) {
      const id = `reset-${kind}`;
      expect(await call(server.url, headers, say(`wait:${id}`), 100)).toBe("reset");
      await waitFor(() => givenUp.has(id));
      const seen = givenUp.get(id);
      expect(seen?.timeoutMs).toBeUndefined();
      expect(ConnectError.from(seen?.reason).code).toBe(Code.Canceled);
    }
  });
});

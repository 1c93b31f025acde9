import http2 from "node:http2";
import { create, createFileRegistry, type DescService } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, file_google_protobuf_wrappers } from "@bufbuild/protobuf/wkt";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  createClient,
  type HandlerContext,
  type Interceptor,
  type Transport,
} from "@connectrpc/connect";
import { connectNodeAdapter, createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { ErrorDetailSchema } from "@evalp/proto/common/v1/error";
import { HealthService } from "@evalp/proto/common/v1/health";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callerTable } from "./auth/service-callers.js";
import { generateServiceKeySet, requireServiceTokens } from "./auth/service-tokens.js";
import { keySetConfig, serviceVerifier } from "./config/config.js";
import { connectH2Handler } from "./connect-h2-handler.js";
import { createH2Transport } from "./connect-h2-transport.js";
import { AppError } from "./core/errors.js";
import { createServiceTransport, serviceCaller, WIRE_READ_OPTIONS } from "./rpc/connect-client.js";
import { fromConnectError, toConnectError } from "./rpc/connect-errors.js";
import { createConnectServer, listen } from "./rpc/connect-server.js";

/*
 * The platform's own Connect client (`createH2Transport`) and server (`connectH2Handler`) speak
 * Connect with connect-node's stock ones, both ways, over real sockets: every shape of call
 * (unary, server streaming, bidi streaming), metadata, errors with their details, deadlines and
 * calls given up mid-way. The server also answers connect-node's gRPC client.
 */

/** A test service: `Say` (unary), `Count` (server streaming), `Chat` (bidi), on StringValue. */
const registry = createFileRegistry(
  create(FileDescriptorProtoSchema, {
    name: "evalp/test/v1/echo.proto",
    package: "evalp.test.v1",
    dependency: ["google/protobuf/wrappers.proto"],
    syntax: "proto3",
    service: [
      {
        name: "EchoService",
        method: [
          {
            name: "Say",
            inputType: ".google.protobuf.StringValue",
            outputType: ".google.protobuf.StringValue",
          },
          {
            name: "Count",
            inputType: ".google.protobuf.StringValue",
            outputType: ".google.protobuf.StringValue",
            serverStreaming: true,
          },
          {
            name: "Chat",
            inputType: ".google.protobuf.StringValue",
            outputType: ".google.protobuf.StringValue",
            clientStreaming: true,
            serverStreaming: true,
          },
        ],
      },
    ],
  }),
  (name) => (name === "google/protobuf/wrappers.proto" ? file_google_protobuf_wrappers : undefined),
);
const EchoService = registry.getService("evalp.test.v1.EchoService") as DescService & {
  method: { say: never; count: never; chat: never };
};
type EchoClient = {
  say(input: { value: string }, options?: object): Promise<{ value: string }>;
  count(input: { value: string }, options?: object): AsyncIterable<{ value: string }>;
  chat(input: AsyncIterable<{ value: string }>, options?: object): AsyncIterable<{ value: string }>;
};

/** What the server saw of the calls that were given up: the deadline it was told, why it was aborted. */
const givenUp = new Map<string, { timeoutMs: number | undefined; reason: unknown }>();
const BIG = "x".repeat(200_000);

function echoRoutes(router: ConnectRouter) {
  router.service(EchoService, {
    async say(input: { value: string }, ctx: HandlerContext) {
      const [command, id = ""] = input.value.split(":");
      switch (command) {
        case "fail":
          throw toConnectError(new AppError("not_found", "thing not found.", { resource: "thing" }));
        case "wait":
          // Never answers: the call ends by its deadline or by the caller giving up.
          await new Promise<void>((resolve) => {
            const timeoutMs = ctx.timeoutMs();
            ctx.signal.addEventListener("abort", () => {
              givenUp.set(id, { timeoutMs, reason: ctx.signal.reason });
              resolve();
            });
          });
          return { value: "too late" };
        case "big":
          return { value: BIG };
        case "meta":
          ctx.responseHeader.set("x-echo", ctx.requestHeader.get("x-test") ?? "");
          ctx.responseTrailer.set("x-trailer", "after");
          return { value: "meta" };
        default:
          return { value: `you said ${input.value}` };
      }
    },
    async *count(input: { value: string }) {
      for (let i = 1; i <= Number(input.value); i++) yield { value: String(i) };
    },
    async *chat(messages: AsyncIterable<{ value: string }>) {
      for await (const message of messages) yield { value: `echo ${message.value}` };
    },
  } as never);
}

type Server = { url: string; close(): Promise<void> };

async function serve(kind: "ours" | "stock", interceptors: Interceptor[] = []): Promise<Server> {
  const options = { routes: echoRoutes, interceptors, ...WIRE_READ_OPTIONS };
  const server = http2.createServer();
  if (kind === "ours") server.on("stream", connectH2Handler(options));
  else server.on("request", connectNodeAdapter(options));
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
  });
  const port = await listen(server, 0, "127.0.0.1");
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        for (const session of sessions) session.destroy();
      }),
  };
}

function transport(kind: "ours" | "stock", url: string): Transport {
  return kind === "ours"
    ? createH2Transport({
        baseUrl: url,
        defaultTimeoutMs: 5_000,
        interceptors: [],
        idleConnectionMs: 60_000,
        ...WIRE_READ_OPTIONS,
      })
    : createConnectTransport({ baseUrl: url, httpVersion: "2", ...WIRE_READ_OPTIONS });
}

async function waitFor(condition: () => boolean, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function failure(call: Promise<unknown>): Promise<ConnectError> {
  const error = await call.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(ConnectError);
  return error as ConnectError;
}

const pairs = [
  { client: "ours", server: "stock" },
  { client: "stock", server: "ours" },
  { client: "ours", server: "ours" },
] as const;

describe.each(pairs)(
  "a $client client calling a $server server",
  ({ client: clientKind, server: serverKind }) => {
    let server: Server;
    let client: EchoClient;
    beforeAll(async () => {
      server = await serve(serverKind);
      client = createClient(EchoService, transport(clientKind, server.url)) as unknown as EchoClient;
    });
    afterAll(() => server.close());

    it("answers a unary call", async () => {
      expect((await client.say({ value: "hello" })).value).toBe("you said hello");
    });

    it("carries request headers, response headers and trailers", async () => {
      let header: Headers | undefined;
      let trailer: Headers | undefined;
      await client.say(
        { value: "meta" },
        {
          headers: { "x-test": "sent" },
          onHeader: (h: Headers) => {
            header = h;
          },
          onTrailer: (t: Headers) => {
            trailer = t;
          },
        },
      );
      expect(header?.get("x-echo")).toBe("sent");
      expect(trailer?.get("x-trailer")).toBe("after");
    });

    it("carries a message larger than a frame, and many calls at once on one connection", async () => {
      expect((await client.say({ value: "big" })).value).toBe(BIG);
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) => client.say({ value: String(i) })),
      );
      expect(answers.map((answer) => answer.value)).toEqual(
        Array.from({ length: 50 }, (_, i) => `you said ${i}`),
      );
    });

    it("carries an error's code, message and details", async () => {
      const error = await failure(client.say({ value: "fail" }));
      expect(error.code).toBe(Code.NotFound);
      expect(error.rawMessage).toBe("thing not found.");
      expect(error.findDetails(ErrorDetailSchema)).toMatchObject([
        { code: "not_found", context: { resource: "thing" } },
      ]);
      expect(fromConnectError(error)).toMatchObject({ code: "not_found", context: { resource: "thing" } });
    });

    it("ends a call past its deadline on both ends", async () => {
      const id = `${clientKind}-${serverKind}-deadline`;
      const error = await failure(client.say({ value: `wait:${id}` }, { timeoutMs: 200 }));
      expect(error.code).toBe(Code.DeadlineExceeded);
      // The server knew the deadline from the request and gave up too: at its own deadline, or
      // when the caller reset the call at the same moment (connect-node resets it with
      // INTERNAL_ERROR, read as internal; the platform's client with CANCEL).
      await waitFor(() => givenUp.has(id));
      const seen = givenUp.get(id);
      expect(seen?.timeoutMs).toBeGreaterThan(0);
      expect(seen?.timeoutMs).toBeLessThanOrEqual(200);
      expect([Code.DeadlineExceeded, Code.Canceled, Code.Internal]).toContain(
        ConnectError.from(seen?.reason).code,
      );
    });

    it("gives up a call when the caller aborts it, and the server hears of it", async () => {
      const id = `${clientKind}-${serverKind}-abort`;
      const controller = new AbortController();
      const call = client.say({ value: `wait:${id}` }, { signal: controller.signal, timeoutMs: 30_000 });
      // Aborted once the server runs it: mid-call.
      await new Promise((resolve) => setTimeout(resolve, 100));
      controller.abort();
      const error = await failure(call);
      expect(error.code).toBe(Code.Canceled);
      await waitFor(() => givenUp.has(id));
      expect(ConnectError.from(givenUp.get(id)?.reason).code).toBe(Code.Canceled);
    });

    it("refuses a call the caller had already given up", async () => {
      const controller = new AbortController();
      controller.abort();
      const error = await failure(client.say({ value: "hello" }, { signal: controller.signal }));
      expect(error.code).toBe(Code.Canceled);
    });

    it("streams a server's answers", async () => {
      const values: string[] = [];
      for await (const message of client.count({ value: "5" })) values.push(message.value);
      expect(values).toEqual(["1", "2", "3", "4", "5"]);
    });

    it("streams both ways", async () => {
      async function* said() {
        yield { value: "a" };
        yield { value: "b" };
      }
      const values: string[] = [];
      for await (const message of client.chat(said())) values.push(message.value);
      expect(values).toEqual(["echo a", "echo b"]);
    });
  },
);

describe("the platform's server", () => {
  let server: Server;
  beforeAll(async () => {
    server = await serve("ours");
  });
  afterAll(() => server.close());

  it("answers connect-node's gRPC client: unary, errors with details, server streaming", async () => {
    const client = createClient(
      EchoService,
      createGrpcTransport({ baseUrl: server.url, ...WIRE_READ_OPTIONS }),
    ) as unknown as EchoClient;
    expect((await client.say({ value: "hello" })).value).toBe("you said hello");
    const error = await failure(client.say({ value: "fail" }));
    expect(error.code).toBe(Code.NotFound);
    expect(error.findDetails(ErrorDetailSchema)).toMatchObject([{ code: "not_found" }]);
    const values: string[] = [];
    for await (const message of client.count({ value: "3" })) values.push(message.value);
    expect(values).toEqual(["1", "2", "3"]);
  });

  it("answers a path it does not serve with 404 (unimplemented)", async () => {
    const client = createClient(HealthService, transport("stock", server.url));
    expect((await failure(client.check({}))).code).toBe(Code.Unimplemented);
  });
});

describe("service tokens between the platform's and the stock ends", () => {
  const keys = keySetConfig(generateServiceKeySet(["test"]));
  const caller = serviceCaller(keys, "test");

  it("are sent by the platform's client and checked by a stock server", async () => {
    const server = await serve("stock", [
      requireServiceTokens(serviceVerifier(keys, "stock"), callerTable({ test: [EchoService] })),
    ]);
    try {
      const withTokens = createClient(
        EchoService,
        createServiceTransport("stock", () => server.url, 5_000, caller),
      ) as unknown as EchoClient;
      expect((await withTokens.say({ value: "hello" })).value).toBe("you said hello");
      const without = createClient(EchoService, transport("stock", server.url)) as unknown as EchoClient;
      expect((await failure(without.say({ value: "hello" }))).code).toBe(Code.Unauthenticated);
    } finally {
      await server.close();
    }
  });

  it("are required by the platform's server from a stock client", async () => {
    const rpc = createConnectServer({
      routes: () => {},
      logger: pino({ level: "silent" }),
      checks: [],
      tokens: serviceVerifier(keys, "peer"),
      callers: callerTable({}),
    });
    const port = await listen(rpc.server, 0, "127.0.0.1");
    try {
      const url = `http://127.0.0.1:${port}`;
      const stock = createClient(HealthService, transport("stock", url));
      expect((await failure(stock.check({}))).code).toBe(Code.Unauthenticated);
      const ours = createClient(
        HealthService,
        createServiceTransport("peer", () => url, 5_000, caller),
      );
      expect((await ours.check({})).ready).toBe(true);
    } finally {
      await rpc.close();
    }
  });
});

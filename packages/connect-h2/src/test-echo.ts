import http2 from "node:http2";
import { setTimeout as sleep } from "node:timers/promises";
import { create, createFileRegistry } from "@bufbuild/protobuf";
import { type GenService, serviceDesc } from "@bufbuild/protobuf/codegenv2";
import {
  FileDescriptorProtoSchema,
  file_google_protobuf_wrappers,
  StringValueSchema,
} from "@bufbuild/protobuf/wkt";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  type HandlerContext,
  type Interceptor,
} from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { connectH2Handler } from "./connect-h2-handler.js";

/*
 * What the hop's tests share: a test service, `EchoService` with `Say` (unary), `Count` (server
 * streaming) and `Chat` (bidi) on StringValue, and servers of it on real sockets, the platform's
 * handler or connect-node's own.
 */

const file = createFileRegistry(
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
      {
        name: "UnservedService",
        method: [
          {
            name: "Say",
            inputType: ".google.protobuf.StringValue",
            outputType: ".google.protobuf.StringValue",
          },
        ],
      },
    ],
  }),
  (name) => (name === "google/protobuf/wrappers.proto" ? file_google_protobuf_wrappers : undefined),
).getFile("evalp/test/v1/echo.proto");
if (!file) throw new Error("the echo service's file did not build");

type Echo<Kind extends "unary" | "server_streaming" | "bidi_streaming"> = {
  methodKind: Kind;
  input: typeof StringValueSchema;
  output: typeof StringValueSchema;
};

/** The test service, typed as generated code types its services. */
export const EchoService: GenService<{
  say: Echo<"unary">;
  count: Echo<"server_streaming">;
  chat: Echo<"bidi_streaming">;
}> = serviceDesc(file, 0);
/** A service of the same file that no test server serves. */
export const UnservedService: GenService<{ say: Echo<"unary"> }> = serviceDesc(file, 1);

/** What a server saw of the calls that were given up: the deadline it was told, why it was aborted. */
export const givenUp = new Map<string, { timeoutMs: number | undefined; reason: unknown }>();
export const BIG = "x".repeat(200_000);
/** The signals of the calls `keep:<id>` made, to be read once they are answered. */
export const kept = new Map<string, AbortSignal>();

/**
 * `Say` answers "you said <value>", or by its command: `fail` (NotFound with a StringValue detail),
 * `code:<n>` (that Connect code, with a detail and metadata), `throw` (not a ConnectError), `keep:<id>`
 * (keeps its signal in `kept`), `wait:<id>`
 * (never answers; records in `givenUp` how the call ended), `big`, `meta` (echoes `x-test` as
 * header `x-echo`, adds trailer `x-trailer`).
 */
export function echoRoutes(router: ConnectRouter, onSay?: (value: string) => void) {
  router.service(EchoService, {
    async say(input, ctx: HandlerContext) {
      onSay?.(input.value);
      const [command, id = ""] = input.value.split(":");
      switch (command) {
        case "fail":
          throw new ConnectError("thing not found.", Code.NotFound, undefined, [
            { desc: StringValueSchema, value: { value: "thing" } },
          ]);
        case "code":
          throw new ConnectError(`failed with ${id}.`, Number(id), { "x-error": `code ${id}` }, [
            { desc: StringValueSchema, value: { value: id } },
          ]);
        case "keep":
          kept.set(id, ctx.signal);
          return { value: "kept" };
        case "throw":
          throw new Error("not a ConnectError");
        case "wait":
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
    async *count(input) {
      for (let i = 1; i <= Number(input.value); i++) yield { value: String(i) };
    },
    async *chat(messages) {
      for await (const message of messages) yield { value: `echo ${message.value}` };
    },
  });
}

export type EchoServer = {
  url: string;
  server: http2.Http2Server;
  /** Connections opened so far, and open now. */
  connections: { opened: number; open: number };
  /** Stops listening; its connections are destroyed (`graceful`: sent away, their calls finish). */
  close(graceful?: boolean): Promise<void>;
};

/**
 * An HTTP/2 server on a free port: `ours` serves the echo routes with the platform's handler,
 * `stock` with connect-node's adapter; a function serves every stream itself.
 */
export async function serve(
  kind: "ours" | "stock" | ((stream: http2.ServerHttp2Stream) => void),
  options: {
    interceptors?: Interceptor[];
    onSay?: (value: string) => void;
    maxConnectionAgeMs?: number;
    readMaxBytes?: number;
  } = {},
): Promise<EchoServer> {
  const handlerOptions = {
    routes: (router: ConnectRouter) => echoRoutes(router, options.onSay),
    interceptors: options.interceptors ?? [],
    binaryOptions: { recursionLimit: 512 },
    jsonOptions: { recursionLimit: 512 },
    readMaxBytes: options.readMaxBytes,
  };
  const server = http2.createServer();
  if (kind === "ours") server.on("stream", connectH2Handler(handlerOptions));
  else if (kind === "stock") server.on("request", connectNodeAdapter(handlerOptions));
  else
    server.on("stream", (stream: http2.ServerHttp2Stream) => {
      // A stream the test resets fails on its side too: no uncaught error for it.
      stream.on("error", () => {});
      kind(stream);
    });
  const sessions = new Set<http2.ServerHttp2Session>();
  const connections = { opened: 0, open: 0 };
  server.on("session", (session) => {
    sessions.add(session);
    connections.opened += 1;
    connections.open += 1;
    const maxAge = options.maxConnectionAgeMs;
    const aged = maxAge ? setTimeout(() => session.close(), maxAge) : undefined;
    session.on("close", () => {
      clearTimeout(aged);
      connections.open -= 1;
      sessions.delete(session);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("the server listens on no port");
  const { port } = address;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    connections,
    close: (graceful = false) =>
      new Promise((resolve) => {
        server.close(() => resolve());
        for (const session of sessions) {
          if (graceful) session.close();
          else session.destroy();
        }
      }),
  };
}

export async function waitFor(condition: () => boolean, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await sleep(5);
  }
}

/** The error a call failed with, which must be a ConnectError (a call that succeeded fails the test). */
export async function failure(call: Promise<unknown>): Promise<ConnectError> {
  const error = await call.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!(error instanceof ConnectError))
    throw new Error(`the call did not fail with a ConnectError: ${String(error)}`);
  return error;
}

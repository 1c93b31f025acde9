import type http2 from "node:http2";
import type { DescMethodUnary } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ConnectRouterOptions,
  createContextValues,
  type HandlerContext,
  type MethodImplSpec,
} from "@connectrpc/connect";
import {
  createMethodSerializationLookup,
  invokeUnaryImplementation,
  type MethodSerializationLookup,
  mergeNonProtocolHeaders,
  validateUniversalHandlerOptions,
} from "@connectrpc/connect/protocol";
import {
  codeToHttpStatus,
  contentTypeUnaryJson,
  contentTypeUnaryProto,
  errorToJsonBytes,
  headerContentType,
  headerTimeout,
  headerUnaryContentLength,
  parseTimeout,
} from "@connectrpc/connect/protocol-connect";
import { Deadlines } from "./h2-deadlines.js";
import { errorFromUnansweredClose } from "./h2-errors.js";
import { nodeHeaders } from "./h2-messages.js";
import { WireHeaders } from "./wire-headers.js";

/*
 * The lean path of the platform's server, for the call the planes make of each other: unary,
 * Connect, binary, POST, uncompressed. It does what connect's Connect handler does for such a call
 * (same checks in the same order, the same interceptors and implementation, the same answer on the
 * wire) with connect's own pieces, but without what the universal handler spends per call to be
 * generic: no async iterators over a one-message body, no URL parsed, one AbortController (the
 * stream's close, the deadline and the server's shutdown all abort it) instead of three, the
 * request's Headers built once. Anything else goes through connect's router.
 */

/** A unary method's implementation, as connect's router keeps it. */
export type UnarySpec = MethodImplSpec & { kind: "unary" };
type Options = ReturnType<typeof validateUniversalHandlerOptions>;

/** Node's names (lowercase) of the headers the choice reads. */
const CONTENT_TYPE = headerContentType.toLowerCase();
const TIMEOUT = headerTimeout.toLowerCase();
const CONTENT_LENGTH = headerUnaryContentLength.toLowerCase();

const uncompressed = (value: string | string[] | undefined) => value === undefined || value === "identity";

/**
 * Whether a request to a unary method can take the lean path: a binary Connect POST that is not
 * compressed and asks for no compressed answer (connect would compress a large one), with no
 * `content-length` (connect holds the body to it: the router checks that), and the protocol
 * version header when the server requires it. Anything else is the router's.
 */
export function isLeanUnary(headers: http2.IncomingHttpHeaders, requireProtocolHeader = false): boolean {
  return (
    headers[":method"] === "POST" &&
    headers[CONTENT_TYPE] === contentTypeUnaryProto &&
    uncompressed(headers["content-encoding"]) &&
    uncompressed(headers["connect-content-encoding"]) &&
    uncompressed(headers["accept-encoding"]) &&
    headers[CONTENT_LENGTH] === undefined &&
    (!requireProtocolHeader || headers["connect-protocol-version"] === "1")
  );
}

/** What the lean path shares between a server's calls. */
export type LeanServer = {
  /** The router's options as connect validates them (its defaults for the byte limits), read once. */
  options: Options;
  deadlines: Deadlines;
};

export function createLeanServer(options: ConnectRouterOptions): LeanServer {
  return { options: validateUniversalHandlerOptions(options), deadlines: new Deadlines() };
}

/** What the lean path keeps of a method: its implementation and connect's serializers for it (with the byte limits). */
export type LeanMethod = { spec: UnarySpec; serialization: MethodSerializationLookup<never, never> };

export function leanMethod(spec: UnarySpec, { options }: LeanServer): LeanMethod {
  const serialization = createMethodSerializationLookup(
    spec.method as DescMethodUnary,
    options.binaryOptions,
    options.jsonOptions,
    options,
  ) as MethodSerializationLookup<never, never>;
  return { spec, serialization };
}

/**
 * Serves one call on the lean path; resolves once its answer is written (or the stream is gone
 * and nothing could be), rejects when writing it failed.
 */
export async function serveLeanUnary(
  { spec, serialization }: LeanMethod,
  server: LeanServer,
  stream: http2.ServerHttp2Stream,
  headers: http2.IncomingHttpHeaders,
  path: string,
): Promise<void> {
  const { options } = server;
  const controller = new AbortController();
  const body = readBody(stream, options.readMaxBytes);
  let answered = false;
  // A call given up before its answer (the caller reset the stream, the connection died) aborts
  // the call's signal and the reading of its body; an answered one was aborted by its answer.
  stream.once("close", () => {
    if (answered) return;
    const error = errorFromUnansweredClose(stream);
    body.fail(error);
    if (!controller.signal.aborted) controller.abort(error);
  });
  const timeout = parseTimeout(header(headers, TIMEOUT), options.maxTimeoutMs);
  const context = createContext(spec, server, controller, headers, path, timeout.timeoutMs);

  let status = 200;
  let answer: Uint8Array;
  try {
    // Connect's order: the gate before the body is read, a bad timeout before the body too.
    if (options.requestGate !== undefined) await options.requestGate(context);
    if (timeout.error) throw timeout.error;
    const input = serialization.getI(true).parse(await body.bytes);
    const output = await invokeUnaryImplementation(spec, context, input, options.interceptors);
    answer = serialization.getO(true).serialize(output as never);
  } catch (reason) {
    context.abort(reason);
    const error =
      reason instanceof ConnectError
        ? reason
        : new ConnectError("internal error", Code.Internal, undefined, undefined, reason);
    status = codeToHttpStatus(error.code);
    context.responseHeader.set(headerContentType, contentTypeUnaryJson);
    // An error read from another plane's answer is relayed without that answer's metadata.
    if (!error.isWireError) mergeNonProtocolHeaders(context.responseHeader, error.metadata);
    answer = errorToJsonBytes(error, options.jsonOptions);
  } finally {
    answered = true;
    context.abort();
  }
  if (stream.destroyed) return;
  // A unary answer's trailers travel as `trailer-<name>` headers (connect's `trailerMux`).
  const head = nodeHeaders(context.responseTrailer, nodeHeaders(context.responseHeader), "trailer-");
  head[CONTENT_LENGTH] = String(answer.byteLength);
  head[":status"] = status;
  // Ended by (empty) trailers, as the router's path ends a stream: see respond() in the handler.
  stream.once("wantTrailers", () => stream.sendTrailers({}));
  stream.respond(head, { waitForTrailers: true });
  stream.end(answer);
}

type LeanContext = HandlerContext & { abort(reason?: unknown): void };

/**
 * Why a call's signal is aborted once it is answered: what `AbortController.abort()` gives without
 * a reason (connect's handler aborts so), made once: a DOMException with its stack per call was
 * about a seventh of this path's own CPU in a profile.
 */
const ANSWERED = new DOMException("This operation was aborted", "AbortError");

/**
 * The call's context with the fields connect's `createHandlerContext` gives, on one
 * AbortController: aborted at the deadline (as connect's, with DeadlineExceeded), when the
 * server shuts down, when the stream closes first, and by `abort` once the call is answered.
 */
function createContext(
  spec: UnarySpec,
  { options, deadlines }: LeanServer,
  controller: AbortController,
  headers: http2.IncomingHttpHeaders,
  path: string,
  timeoutMs: number | undefined,
): LeanContext {
  const { signal } = controller;
  let forget: (() => void) | undefined;
  let timeLeft: () => number | undefined = () => undefined;
  if (timeoutMs !== undefined) {
    const deadline = Date.now() + timeoutMs;
    timeLeft = () => deadline - Date.now();
    const expire = () => {
      if (!signal.aborted)
        controller.abort(new ConnectError("the operation timed out", Code.DeadlineExceeded));
    };
    if (timeoutMs <= 0) expire();
    else forget = deadlines.add(performance.now() + timeoutMs, expire);
  }
  const shutdown = options.shutdownSignal;
  const onShutdown = () => {
    if (!signal.aborted) controller.abort(shutdown?.reason);
  };
  if (shutdown?.aborted) onShutdown();
  else shutdown?.addEventListener("abort", onShutdown);
  return {
    service: spec.method.parent,
    method: spec.method,
    protocolName: "connect",
    requestMethod: "POST",
    url: `${header(headers, ":scheme") ?? "http"}://${header(headers, ":authority") ?? "localhost"}${path}`,
    signal,
    timeoutMs: timeLeft,
    requestHeader: WireHeaders.fromNode(headers),
    responseHeader: new WireHeaders({ [headerContentType]: contentTypeUnaryProto }),
    responseTrailer: new WireHeaders(),
    values: createContextValues(),
    abort(reason?: unknown) {
      forget?.();
      shutdown?.removeEventListener("abort", onShutdown);
      if (!signal.aborted) controller.abort(reason ?? ANSWERED);
    },
  };
}

function header(headers: http2.IncomingHttpHeaders, name: string): string | null {
  const value = headers[name];
  return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
}

/**
 * A request's body collected from its stream's events, held to `readMaxBytes` as connect's
 * `readAllBytes` holds it (what comes past the limit is dropped, not held).
 */
function readBody(stream: http2.ServerHttp2Stream, readMaxBytes: number) {
  const chunks: Buffer[] = [];
  let size = 0;
  let settled = false;
  let resolve: (bytes: Uint8Array) => void = () => {};
  let reject: (error: unknown) => void = () => {};
  const bytes = new Promise<Uint8Array>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  // Unread when the call fails before its body is read (a bad timeout): no unhandled rejection.
  bytes.catch(() => {});
  const fail = (error: unknown) => {
    if (settled) return;
    settled = true;
    chunks.length = 0;
    reject(error);
  };
  stream.on("data", (chunk: Buffer) => {
    if (settled) return;
    size += chunk.byteLength;
    if (size > readMaxBytes) {
      fail(
        new ConnectError(
          `message size is larger than configured readMaxBytes ${readMaxBytes}`,
          Code.ResourceExhausted,
        ),
      );
      return;
    }
    chunks.push(chunk);
  });
  stream.once("end", () => {
    if (settled) return;
    settled = true;
    resolve(chunks.length === 1 && chunks[0] ? chunks[0] : Buffer.concat(chunks));
  });
  return { bytes, fail };
}

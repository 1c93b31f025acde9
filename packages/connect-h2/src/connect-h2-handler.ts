import http2 from "node:http2";
import type { DescMethod } from "@bufbuild/protobuf";
import {
  Code,
  type ConnectRouter,
  type ConnectRouterOptions,
  createConnectRouter,
  createMethodImplSpec,
  createServiceImplSpec,
  type MethodImplSpec,
} from "@connectrpc/connect";
import type {
  UniversalHandler,
  UniversalServerRequest,
  UniversalServerResponse,
} from "@connectrpc/connect/protocol";
import { compressionBrotli, compressionGzip } from "@connectrpc/connect-node";
import { errorFromNode, errorFromUnansweredClose } from "./h2-errors.js";
import {
  createLeanServer,
  isLeanUnary,
  type LeanMethod,
  leanMethod,
  serveLeanUnary,
  type UnarySpec,
} from "./h2-lean-unary.js";
import { ByteQueue, nodeHeaders } from "./h2-messages.js";
import { WireHeaders } from "./wire-headers.js";

/*
 * Serves a Connect router on `node:http2`'s own stream events rather than its compatibility API
 * (no Http2ServerRequest/Response pair per call): connect's universal handlers (every protocol the
 * router speaks: Connect, gRPC, gRPC-Web) do the protocol, this only carries bytes and headers
 * between them and the stream. The calls the planes make of each other (unary binary Connect,
 * uncompressed) take a lean path instead (h2-lean-unary.ts): the same interceptors and
 * implementation, with less made per call.
 */

export type H2HandlerOptions = ConnectRouterOptions & {
  routes(router: ConnectRouter): void;
  /** A handler that failed other than by its call being given up (connect-node logs these to the console). */
  onError?(error: unknown, handler: UniversalHandler): void;
};

/** A `stream` listener of an `http2` server, serving the routes `options.routes` registers. */
export function connectH2Handler(
  options: H2HandlerOptions,
): (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => void {
  // connect-node's adapter accepts compressed requests and compresses large answers for callers that ask.
  const routerOptions = { acceptCompression: [compressionGzip, compressionBrotli], ...options };
  const router = createConnectRouter(routerOptions);
  const lean = createLeanServer(routerOptions);
  const leanMethods = new Map<string, LeanMethod>();
  options.routes(
    leanRecorder(router, (method, spec) => {
      const path = `/${method.parent.typeName}/${method.name}`;
      // A path registered again is served by its last registration, on both paths.
      if (spec) leanMethods.set(path, leanMethod(spec, lean));
      else leanMethods.delete(path);
    }),
  );
  const handlers = new Map<string, UniversalHandler>();
  for (const handler of router.handlers) handlers.set(handler.requestPath, handler);

  /** What the stream's end means for the call: answered, or failed with `error` writing its answer. */
  const settled = (stream: http2.ServerHttp2Stream, handler: UniversalHandler, error: unknown) => {
    if (!stream.destroyed) stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    const reason = errorFromNode(error);
    if (reason.code !== Code.Aborted && reason.code !== Code.Canceled) options.onError?.(error, handler);
  };

  return (stream, headers) => {
    const path = headers[":path"] ?? "";
    const query = path.indexOf("?");
    const handler = handlers.get(query < 0 ? path : path.slice(0, query));
    if (!handler) {
      stream.respond({ ":status": 404 }, { endStream: true });
      return;
    }
    // A stream's failure is read at its close; unheard, it would be an uncaught error.
    stream.on("error", () => {});
    const leanOne =
      query < 0 && isLeanUnary(headers, lean.options.requireConnectProtocolHeader)
        ? leanMethods.get(path)
        : undefined;
    if (leanOne) {
      serveLeanUnary(leanOne, lean, stream, headers, path).catch((error: unknown) =>
        settled(stream, handler, error),
      );
      return;
    }
    const body = new ByteQueue(stream);
    const controller = new AbortController();
    let answered = false;
    // A call given up before it was answered (the caller reset the stream, or the connection died)
    // aborts the handler's signal; one answered is not aborted again (connect aborts its own).
    stream.once("close", () => {
      if (answered) return;
      const error = errorFromUnansweredClose(stream);
      body.fail(error);
      controller.abort(error);
    });
    const request: UniversalServerRequest = {
      httpVersion: "2.0",
      method: headers[":method"] ?? "",
      url: `${headers[":scheme"] ?? "http"}://${headers[":authority"] ?? "localhost"}${path}`,
      header: WireHeaders.fromNode(headers),
      body,
      signal: controller.signal,
    };
    handler(request)
      .then((response) => respond(stream, response, handler.method.methodKind === "unary"))
      .then(
        () => {
          answered = true;
        },
        (error) => {
          answered = true;
          settled(stream, handler, error);
        },
      );
  };
}

/**
 * The router as `routes` sees it, telling `onMethod` of each method registered: with its
 * implementation when it may take the lean path (unary, registered with the router's own
 * options), without when it may not (a method registered with options of its own, e.g.
 * interceptors, is served by the router only).
 */
function leanRecorder(
  router: ConnectRouter,
  onMethod: (method: DescMethod, spec: UnarySpec | undefined) => void,
): ConnectRouter {
  const tell = (spec: MethodImplSpec, own: object | undefined) =>
    onMethod(spec.method, spec.kind === "unary" && !own ? spec : undefined);
  const recorder: ConnectRouter = {
    get handlers() {
      return router.handlers;
    },
    service(service, implementation, serviceOptions) {
      router.service(service, implementation, serviceOptions);
      for (const spec of Object.values(createServiceImplSpec(service, implementation).methods))
        tell(spec, serviceOptions);
      return recorder;
    },
    rpc(method, implementation, rpcOptions) {
      router.rpc(method, implementation, rpcOptions);
      tell(createMethodImplSpec(method, implementation), rpcOptions);
      return recorder;
    },
  };
  return recorder;
}

/**
 * Writes a universal response on the stream: its headers once the first chunk of its body is
 * there (connect lets the implementation set headers until then), each chunk as it comes, then
 * the trailers when it has some (gRPC). A unary answer is one chunk: headers and body go together.
 */
async function respond(stream: http2.ServerHttp2Stream, response: UniversalServerResponse, unary: boolean) {
  const iterator = response.body?.[Symbol.asyncIterator]();
  let chunk = iterator ? await iterator.next() : undefined;
  let finished = !iterator;
  try {
    if (stream.destroyed) return;
    const head = nodeHeaders(response.header);
    head[":status"] = response.status;
    // The stream ends with trailers, none (an empty DATA frame with END_STREAM) when the answer
    // has none, as the compatibility API does: a stream ended with its last write closes before
    // that write's callback ran, and Node then makes an ERR_STREAM_DESTROYED error per call.
    const trailer = response.trailer;
    stream.once("wantTrailers", () => stream.sendTrailers(trailer ? nodeHeaders(trailer) : {}));
    stream.respond(head, { waitForTrailers: true });
    if (!iterator || !chunk || chunk.done) {
      finished = true;
      stream.end();
      return;
    }
    while (!chunk.done) {
      const bytes = chunk.value;
      if (unary) {
        chunk = await iterator.next();
        if (chunk.done) {
          finished = true;
          stream.end(bytes);
          return;
        }
      }
      if (stream.destroyed) return;
      if (!stream.write(bytes)) await drained(stream);
      if (!unary) chunk = await iterator.next();
    }
    finished = true;
    if (!stream.destroyed) stream.end();
  } finally {
    // Given up before its end (the stream is gone): the body's producer is told to stop.
    if (!finished) await iterator?.return?.()?.catch(() => {});
  }
}

/** Waits for the stream to take more, or to be gone. */
function drained(stream: http2.ServerHttp2Stream): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off("drain", done);
      stream.off("close", done);
      resolve();
    };
    stream.on("drain", done);
    stream.on("close", done);
  });
}

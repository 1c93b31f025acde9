import http2 from "node:http2";
import {
  type BinaryReadOptions,
  create,
  type DescMessage,
  type DescMethod,
  type DescMethodUnary,
} from "@bufbuild/protobuf";
import {
  appendHeaders,
  Code,
  ConnectError,
  createContextValues,
  type Interceptor,
  type Transport,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import {
  createMethodSerializationLookup,
  type MethodSerializationLookup,
  type UniversalClientFn,
  type UniversalClientRequest,
} from "@connectrpc/connect/protocol";
import {
  createTransport,
  errorFromJsonBytes,
  requestHeader,
  validateResponseWithCompression,
} from "@connectrpc/connect/protocol-connect";
import { errorFromNode, errorFromReset } from "./h2-errors.js";
import { ByteQueue, nodeHeaders, webHeaders } from "./h2-messages.js";
import { ReplicaSession } from "./h2-replica-session.js";

/*
 * A Connect client over raw `node:http2` sessions, speaking the protocol with connect's own code
 * (headers, response validation, error bodies, trailers), without what the stock connect-node
 * client spends on every call: two AbortControllers linked together and a DOMException when the
 * call ends, a ConnectError built on the normal path, the serializers made again per call,
 * async iterators over a one-message body. A unary call here is a stream opened, one write, the
 * answer collected from its events, and a timer for its deadline; an AbortController only when
 * the caller passed a signal. Streaming calls, which the planes do not use, go through connect's
 * own `createTransport` over the same sessions.
 */

export type H2TransportOptions = {
  /** The replica's base URL (`http://10.0.0.7:8081`). */
  baseUrl: string;
  /** A call's deadline when it names none (a timeout of 0 or less: none). */
  defaultTimeoutMs: number;
  interceptors: Interceptor[];
  binaryOptions: Partial<BinaryReadOptions>;
  jsonOptions: { recursionLimit?: number };
  /** A connection that carried no call for this long is closed. */
  idleConnectionMs: number;
};

/** A transport to one replica and how to let go of its connection. */
export type H2Transport = Transport & { close(): void };

/** Stands for "the caller gave no signal": never aborted, shared by every call. */
const NO_SIGNAL = new AbortController().signal;
/**
 * Where a call's deadline (performance.now() time) travels with its request through the
 * interceptors, which are chained once for every call: a symbol-keyed property, which survives an
 * interceptor's `{ ...req }`.
 */
const DEADLINE = Symbol("evalp.deadline");
type WithDeadline = { [DEADLINE]?: number };

const { NGHTTP2_CANCEL, NGHTTP2_INTERNAL_ERROR, NGHTTP2_REFUSED_STREAM } = http2.constants;

/** Binary Connect is what the planes speak to each other; no compression on the cluster's network. */
const USE_BINARY = true;
const NO_LIMIT = { readMaxBytes: 0xffffffff, writeMaxBytes: 0xffffffff, compressMinBytes: 0xffffffff };

export function createH2Transport(options: H2TransportOptions): H2Transport {
  const baseUrl = options.baseUrl.replace(/\/$/, "");
  const session = new ReplicaSession(new URL(baseUrl).origin, options.idleConnectionMs);
  // Made once per method, not per call.
  const serializers = new WeakMap<DescMethod, MethodSerializationLookup<DescMessage, DescMessage>>();
  const serializationOf = (method: DescMethod) => {
    let lookup = serializers.get(method);
    if (!lookup) {
      lookup = createMethodSerializationLookup(
        method as DescMethodUnary,
        options.binaryOptions,
        options.jsonOptions,
        NO_LIMIT,
      );
      serializers.set(method, lookup);
    }
    return lookup;
  };
  const paths = new WeakMap<DescMethod, string>();
  const pathOf = (method: DescMethod) => {
    let path = paths.get(method);
    if (path === undefined) {
      path = `/${method.parent.typeName}/${method.name}`;
      paths.set(method, path);
    }
    return path;
  };

  /** The innermost step of a unary call: the request on the wire, the answer read back. */
  const send = (req: UnaryRequest, deadline: number | undefined): Promise<UnaryResponse> => {
    const body = serializationOf(req.method).getI(USE_BINARY).serialize(req.message);
    const headers = nodeHeaders(req.header, { ":method": "POST", ":path": pathOf(req.method) });
    return exchange(req, headers, body, deadline, true);
  };

  /**
   * One request and its answer on a stream. A stream the server refused unprocessed (it had just
   * sent the connection away: a GOAWAY crossing the request) is sent once more, on a new
   * connection, whatever the method: it never ran.
   */
  const exchange = (
    req: UnaryRequest,
    headers: http2.OutgoingHttpHeaders,
    body: Uint8Array,
    deadline: number | undefined,
    mayResend: boolean,
  ): Promise<UnaryResponse> =>
    new Promise((resolve, reject) => {
      const stream = openStream(session, headers, reject);
      if (!stream) return;
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      const signal = req.signal;
      const settle = () => {
        settled = true;
        if (timer) clearTimeout(timer);
        if (signal !== NO_SIGNAL) signal.removeEventListener("abort", onAbort);
      };
      const fail = (error: ConnectError, cancel: boolean) => {
        if (settled) return;
        settle();
        // Tell the server the call is given up (gRPC's mapping: CANCEL).
        if (cancel && !stream.closed) stream.close(NGHTTP2_CANCEL);
        reject(error);
      };
      const onAbort = () =>
        fail(
          ConnectError.from(signal.reason ?? new Error("This operation was aborted"), Code.Canceled),
          true,
        );
      if (deadline !== undefined) {
        timer = setTimeout(
          () => fail(new ConnectError("the operation timed out", Code.DeadlineExceeded), true),
          Math.max(deadline - performance.now(), 0),
        );
      }
      if (signal !== NO_SIGNAL) {
        if (signal.aborted) {
          onAbort();
          return;
        }
        signal.addEventListener("abort", onAbort);
      }

      let status = 0;
      let responseHeaders: http2.IncomingHttpHeaders | undefined;
      let ended = false;
      let failure: unknown;
      const chunks: Buffer[] = [];
      stream.on("response", (incoming) => {
        responseHeaders = incoming;
        status = Number(incoming[":status"] ?? 0);
      });
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        ended = true;
      });
      stream.on("error", (error) => {
        failure = error;
      });
      // Settled when the stream closes, once its reset code is known: a stream whose connection
      // died also ends, without an answer or with part of one.
      stream.on("close", () => {
        if (settled) return;
        const rstCode = stream.rstCode ?? 0;
        if (rstCode === NGHTTP2_REFUSED_STREAM && !responseHeaders && mayResend) {
          settle();
          resolve(exchange(req, headers, body, deadline, false));
          return;
        }
        if (failure !== undefined) {
          fail(errorFromNode(failure), false);
          return;
        }
        if (!ended || !responseHeaders || rstCode !== 0) {
          fail(
            errorFromReset(rstCode) ??
              new ConnectError("the stream closed before its response", Code.Unavailable),
            false,
          );
          return;
        }
        try {
          const answer = read(req.method, status, responseHeaders, chunks);
          settle();
          resolve(answer);
        } catch (error) {
          fail(ConnectError.from(error), false);
        }
      });
      stream.end(body);
    });

  /** The answer of a unary call from its status, headers and body, as connect's own transport reads it. */
  const read = (
    method: DescMethod,
    status: number,
    nodeHeaders: http2.IncomingHttpHeaders | undefined,
    chunks: Buffer[],
  ): UnaryResponse => {
    const trailer = new Headers();
    const responseHeader = webHeaders(nodeHeaders, trailer);
    const { isUnaryError, unaryError } = validateResponseWithCompression(
      "unary",
      [],
      USE_BINARY,
      status,
      responseHeader,
    );
    const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
    if (isUnaryError) throw errorFromJsonBytes(bytes, appendHeaders(responseHeader, trailer), unaryError);
    return {
      stream: false,
      service: method.parent,
      method,
      header: responseHeader,
      message: serializationOf(method).getO(USE_BINARY).parse(bytes),
      trailer,
    } as UnaryResponse;
  };

  // The interceptors wrap the innermost step once, not per call.
  const unaryChain = options.interceptors.reduceRight<(req: UnaryRequest) => Promise<UnaryResponse>>(
    (next, interceptor) => interceptor(next as never) as never,
    (req) => send(req, (req as WithDeadline)[DEADLINE]),
  );

  // Streams: connect's transport over these sessions.
  const streaming = createTransport({
    baseUrl,
    httpClient: h2UniversalClient(session, baseUrl),
    useBinaryFormat: USE_BINARY,
    interceptors: options.interceptors,
    acceptCompression: [],
    sendCompression: null,
    defaultTimeoutMs: options.defaultTimeoutMs,
    binaryOptions: options.binaryOptions,
    jsonOptions: options.jsonOptions,
    ...NO_LIMIT,
  });

  return {
    unary(method, signal, timeoutMs, header, input, contextValues) {
      const timeout =
        timeoutMs === undefined ? options.defaultTimeoutMs : timeoutMs <= 0 ? undefined : timeoutMs;
      const req = {
        stream: false,
        service: method.parent,
        method: method as DescMethodUnary,
        requestMethod: "POST",
        url: baseUrl + pathOf(method),
        header: requestHeader("unary", USE_BINARY, timeout, header, true),
        contextValues: contextValues ?? createContextValues(),
        message: create(method.input, input),
        signal: signal ?? NO_SIGNAL,
        [DEADLINE]: timeout === undefined ? undefined : performance.now() + timeout,
      } as UnaryRequest;
      return unaryChain(req).catch((error) => {
        throw ConnectError.from(error);
      }) as never;
    },
    stream: streaming.stream,
    close: () => session.close(),
  };
}

/**
 * A new stream of `session` for `headers`, or undefined once `reject` has the reason in connect's
 * terms (a session closing or closed throws rather than refusing the stream).
 */
function openStream(
  session: Pick<ReplicaSession, "request">,
  headers: http2.OutgoingHttpHeaders,
  reject: (reason: unknown) => void,
): http2.ClientHttp2Stream | undefined {
  try {
    return session.request(headers);
  } catch (error) {
    reject(errorFromNode(error));
    return undefined;
  }
}

/**
 * connect's `UniversalClientFn` on a replica's session, for the calls connect's own transport
 * runs (streams): the request body written as it comes, the answer's body read as it arrives,
 * the signal (connect passes one per call) closing the stream.
 */
function h2UniversalClient(session: ReplicaSession, baseUrl: string): UniversalClientFn {
  return (request: UniversalClientRequest) =>
    new Promise((resolve, reject) => {
      const path = request.url.startsWith(baseUrl)
        ? request.url.slice(baseUrl.length)
        : (() => {
            const url = new URL(request.url);
            return url.pathname + url.search;
          })();
      const headers = nodeHeaders(request.header, { ":method": request.method, ":path": path });
      const stream = openStream(session, headers, reject);
      if (!stream) return;
      const body = new ByteQueue(stream);
      const trailer = new Headers();
      let responded = false;
      const fail = (error: ConnectError) => {
        body.fail(error);
        if (!responded) reject(error);
        if (!stream.closed)
          stream.close(error.code === Code.Canceled ? NGHTTP2_CANCEL : NGHTTP2_INTERNAL_ERROR);
      };
      const signal = request.signal;
      const onAbort = () =>
        fail(ConnectError.from(signal?.reason ?? new Error("This operation was aborted"), Code.Canceled));
      if (signal?.aborted) {
        onAbort();
        return;
      }
      signal?.addEventListener("abort", onAbort);
      stream.on("response", (incoming) => {
        responded = true;
        resolve({
          status: Number(incoming[":status"] ?? 0),
          header: webHeaders(incoming),
          body,
          trailer,
        });
      });
      stream.on("trailers", (incoming) =>
        webHeaders(incoming).forEach((value, key) => {
          trailer.set(key, value);
        }),
      );
      stream.on("error", (error) => fail(errorFromNode(error)));
      stream.on("close", () => {
        signal?.removeEventListener("abort", onAbort);
        const reset = errorFromReset(stream.rstCode ?? 0);
        if (reset) fail(reset);
        else if (!responded)
          fail(new ConnectError("the stream closed before the response", Code.Unavailable));
      });
      void writeBody(request.body, stream).catch((error) => fail(errorFromNode(error)));
    });
}

/** Writes a request body as it comes, waiting for the stream to drain when it must. */
async function writeBody(body: AsyncIterable<Uint8Array> | undefined, stream: http2.ClientHttp2Stream) {
  if (body) {
    for await (const chunk of body) {
      if (stream.destroyed) return;
      if (!stream.write(chunk)) await new Promise((resolve) => stream.once("drain", resolve));
    }
  }
  if (!stream.destroyed) stream.end();
}

import http2 from "node:http2";
import {
  type BinaryReadOptions,
  create,
  type DescMessage,
  type DescMethod,
  type DescMethodUnary,
  fromBinary,
  isMessage,
  type MessageInitShape,
  toBinary,
} from "@bufbuild/protobuf";
import {
  appendHeaders,
  Code,
  ConnectError,
  type ContextValues,
  createContextValues,
  type Interceptor,
  type StreamResponse,
  type Transport,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import {
  contentTypeUnaryProto,
  errorFromJsonBytes,
  headerContentType,
  headerProtocolVersion,
  headerTimeout,
  headerUserAgent,
  protocolVersion,
  validateResponseWithCompression,
} from "@connectrpc/connect/protocol-connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { codeOf, errorFromNode, errorFromReset } from "./h2-errors.js";
import { nodeHeaders } from "./h2-messages.js";
import { ReplicaSession } from "./h2-replica-session.js";
import { WireHeaders } from "./wire-headers.js";

/*
 * A Connect client over raw `node:http2` sessions for unary calls, speaking the protocol with
 * connect's own code (headers, response validation, error bodies, trailers), without what the
 * stock connect-node client spends on every call: two AbortControllers linked together and a
 * DOMException when the call ends, a ConnectError built on the normal path, async iterators over
 * a one-message body. A unary call here is a stream opened, one write, the answer collected from
 * its events, and a timer for its deadline. Streaming calls go through connect-node's own client.
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
  /** How often a connection is PINGed to learn that its peer still answers (default 10 s). */
  pingIntervalMs?: number;
  /** How long a PING may go unanswered before its connection is destroyed (default 5 s). */
  pingTimeoutMs?: number;
};

/** PING a connection every 10 s; 5 s without an answer and it is given up. */
export const DEFAULT_PING_INTERVAL_MS = 10_000;
export const DEFAULT_PING_TIMEOUT_MS = 5_000;

/** A transport to one replica and how to let go of its connection. */
export type H2Transport = Transport & { close(): void };

/** The step an interceptor wraps, as connect declares it. */
type Next = Parameters<Interceptor>[0];
/** A call's headers as a caller gives them (the web's HeadersInit). */
type CallHeaders = Parameters<Transport["unary"]>[3];

const { NGHTTP2_CANCEL, NGHTTP2_REFUSED_STREAM } = http2.constants;

/** Binary Connect is what the planes speak to each other; no compression on the cluster's network. */
const USE_BINARY = true;
/** The header that carries a call's timeout, as Node's headers name it (lowercase). */
const TIMEOUT_HEADER = headerTimeout.toLowerCase();

export function createH2Transport(options: H2TransportOptions): H2Transport {
  const baseUrl = options.baseUrl.replace(/\/$/, "");
  const pingIntervalMs = options.pingIntervalMs ?? DEFAULT_PING_INTERVAL_MS;
  const pingTimeoutMs = options.pingTimeoutMs ?? DEFAULT_PING_TIMEOUT_MS;
  const session = new ReplicaSession(new URL(baseUrl).origin, {
    idleMs: options.idleConnectionMs,
    pingIntervalMs,
    pingTimeoutMs,
  });
  const paths = new WeakMap<DescMethod, string>();
  const pathOf = (method: DescMethod) => {
    let path = paths.get(method);
    if (path === undefined) {
      path = `/${method.parent.typeName}/${method.name}`;
      paths.set(method, path);
    }
    return path;
  };

  /**
   * The innermost step of a unary call: the request on the wire, the answer read back. Its
   * deadline is the timeout the request carries in its own header (what the server is told),
   * counted from here, and its signal the request's: both are fields of the request, which every
   * interceptor hands on.
   */
  const send = (req: UnaryRequest): Promise<UnaryResponse> => {
    const body = serialize(req);
    const headers = nodeHeaders(req.header, { ":method": "POST", ":path": pathOf(req.method) });
    const timeout = Number(headers[TIMEOUT_HEADER]);
    const deadline = timeout > 0 ? performance.now() + timeout : undefined;
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
      const { signal } = req;
      if (signal.aborted) {
        reject(ConnectError.from(signal.reason ?? new Error("This operation was aborted"), Code.Canceled));
        return;
      }
      const stream = openStream(session, headers, reject);
      if (!stream) return;
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      const settle = () => {
        settled = true;
        if (timer) clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
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
      signal.addEventListener("abort", onAbort);

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
        // The reset's own code when the peer reset the stream (Node's error for it names the code
        // only in its message); the failure's code when the connection failed under the stream.
        const reset =
          failure === undefined || isStreamError(failure) ? errorFromReset(rstCode, failure) : undefined;
        if (reset) {
          fail(reset, false);
          return;
        }
        if (failure !== undefined) {
          fail(errorFromNode(failure), false);
          return;
        }
        if (!ended || !responseHeaders || rstCode !== 0) {
          fail(new ConnectError("the stream closed before its response", Code.Unavailable), false);
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
    method: DescMethodUnary,
    status: number,
    incoming: http2.IncomingHttpHeaders,
    chunks: Buffer[],
  ): UnaryResponse => {
    const trailer = new WireHeaders();
    const header = WireHeaders.fromNode(incoming, trailer);
    const { isUnaryError, unaryError } = validateResponseWithCompression(
      "unary",
      [],
      USE_BINARY,
      status,
      header,
    );
    const bytes = chunks.length === 1 && chunks[0] ? chunks[0] : Buffer.concat(chunks);
    if (isUnaryError) throw errorFromJsonBytes(bytes, appendHeaders(header, trailer), unaryError);
    return { stream: false, service: method.parent, method, header, message: parse(method, bytes), trailer };
  };

  /** The request's message in protobuf's binary form, failing as connect's serializers do. */
  const serialize = (req: UnaryRequest): Uint8Array => {
    try {
      return toBinary(req.method.input, req.message);
    } catch (error) {
      throw new ConnectError(`serialize binary: ${messageOf(error)}`, Code.Internal);
    }
  };
  const parse = (method: DescMethodUnary, bytes: Uint8Array) => {
    try {
      return fromBinary(method.output, bytes, options.binaryOptions);
    } catch (error) {
      throw new ConnectError(`parse binary: ${messageOf(error)}`, Code.Internal);
    }
  };

  // The interceptors wrap the innermost step once, not per call. Only unary calls take this path.
  const unaryChain = options.interceptors.reduceRight<Next>(
    (next, interceptor) => interceptor(next),
    (req) =>
      req.stream ? Promise.reject(new ConnectError("a stream on the unary path", Code.Internal)) : send(req),
  );

  // Streams: connect-node's own client, made at the first stream.
  let streaming: Transport | undefined;
  const streams = () =>
    (streaming ??= createConnectTransport({
      baseUrl,
      httpVersion: "2",
      useBinaryFormat: USE_BINARY,
      interceptors: options.interceptors,
      defaultTimeoutMs: options.defaultTimeoutMs,
      binaryOptions: options.binaryOptions,
      jsonOptions: options.jsonOptions,
      idleConnectionTimeoutMs: options.idleConnectionMs,
      pingIntervalMs,
      pingTimeoutMs,
    }));

  return {
    unary<I extends DescMessage, O extends DescMessage>(
      method: DescMethodUnary<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: CallHeaders,
      input: MessageInitShape<I>,
      contextValues?: ContextValues,
    ): Promise<UnaryResponse<I, O>> {
      const timeout =
        timeoutMs === undefined ? options.defaultTimeoutMs : timeoutMs <= 0 ? undefined : timeoutMs;
      const req: UnaryRequest<I, O> = {
        stream: false,
        service: method.parent,
        method,
        requestMethod: "POST",
        url: baseUrl + pathOf(method),
        header: unaryRequestHeader(timeout, header),
        contextValues: contextValues ?? createContextValues(),
        message: create(method.input, input),
        // A call's own: nothing another call does reaches it.
        signal: signal ?? new AbortController().signal,
      };
      return unaryChain(req).then(
        (res) => answerTo(method, res),
        (error: unknown) => {
          throw ConnectError.from(error);
        },
      );
    },
    stream: (method, signal, timeoutMs, header, input, contextValues) =>
      streams().stream(method, signal, timeoutMs, header, input, contextValues),
    // connect-node's connection for streams closes itself once idle.
    close: () => session.close(),
  };
}

/** What connect's own client sends as its user agent (its `requestHeader`), the version it was written against. */
const USER_AGENT = "connect-es/2.2.0";

/**
 * A unary binary call's headers as connect's `requestHeader` makes them (the caller's, then the
 * timeout, content type, protocol version and, unless the caller named one, the user agent), in
 * the hop's `WireHeaders`.
 */
export function unaryRequestHeader(timeoutMs: number | undefined, init: CallHeaders): WireHeaders {
  const header = new WireHeaders(init);
  if (timeoutMs !== undefined) header.set(headerTimeout, `${timeoutMs}`);
  header.set(headerContentType, contentTypeUnaryProto);
  header.set(headerProtocolVersion, protocolVersion);
  if (!header.has(headerUserAgent)) header.set(headerUserAgent, USER_AGENT);
  return header;
}

/**
 * What the interceptors gave back, as the answer of a unary call to `method`: the same fields,
 * its message checked to be the method's output.
 */
function answerTo<I extends DescMessage, O extends DescMessage>(
  method: DescMethodUnary<I, O>,
  res: UnaryResponse | StreamResponse,
): UnaryResponse<I, O> {
  if (res.stream || !isMessage(res.message, method.output)) {
    throw new ConnectError(`an interceptor answered ${method.name} with something else`, Code.Internal);
  }
  return {
    stream: false,
    service: res.service,
    method,
    header: res.header,
    message: res.message,
    trailer: res.trailer,
  };
}

/** Node's error for a stream the peer reset: its code is only in its message, the reset's is on the stream. */
function isStreamError(error: unknown): boolean {
  return error instanceof Error && codeOf(error) === "ERR_HTTP2_STREAM_ERROR";
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
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

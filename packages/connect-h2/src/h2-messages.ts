import type http2 from "node:http2";

/* What the platform's HTTP/2 client and server share: headers both ways, a body as it arrives. */

/**
 * Node's incoming headers as web Headers, pseudo-headers left out. With `trailers`, the fields
 * Connect sends as `trailer-<name>` in a unary answer go there under `<name>` (connect's
 * `trailerDemux`, in the same pass).
 */
export function webHeaders(nodeHeaders: http2.IncomingHttpHeaders | undefined, trailers?: Headers): Headers {
  const header = new Headers();
  if (!nodeHeaders) return header;
  for (const key in nodeHeaders) {
    if (key.charCodeAt(0) === 58 /* ":" */) continue;
    const value = nodeHeaders[key];
    if (value === undefined) continue;
    let target = header;
    let name = key;
    if (trailers && key.startsWith("trailer-")) {
      target = trailers;
      name = key.slice("trailer-".length);
    }
    if (Array.isArray(value)) for (const one of value) target.append(name, one);
    else target.append(name, String(value));
  }
  return header;
}

/**
 * Web Headers as Node's outgoing headers (lowercase names, as Headers keeps them), added to
 * `headers` (a request's pseudo-headers, say) so that a call makes one object.
 */
export function nodeHeaders(
  header: Headers | undefined,
  headers: http2.OutgoingHttpHeaders = {},
): http2.OutgoingHttpHeaders {
  header?.forEach((value, key) => {
    headers[key] = value;
  });
  return headers;
}

/** A stream's incoming bytes as an async iterable, paused while the reader lags. */
export class ByteQueue implements AsyncIterable<Uint8Array> {
  readonly #stream: NodeJS.ReadableStream;
  readonly #chunks: Uint8Array[] = [];
  #ended = false;
  #error: unknown;
  #waiting: { resolve: (r: IteratorResult<Uint8Array>) => void; reject: (e: unknown) => void } | undefined;

  constructor(stream: NodeJS.ReadableStream) {
    this.#stream = stream;
    stream.on("data", (chunk: Uint8Array) => {
      const waiting = this.#waiting;
      if (waiting) {
        this.#waiting = undefined;
        waiting.resolve({ done: false, value: chunk });
        return;
      }
      this.#chunks.push(chunk);
      if (this.#chunks.length >= 16) stream.pause();
    });
    stream.on("end", () => {
      this.#ended = true;
      const waiting = this.#waiting;
      this.#waiting = undefined;
      waiting?.resolve({ done: true, value: undefined });
    });
  }

  /** Ends the iteration with this error (unless it already ended). */
  fail(error: unknown): void {
    if (this.#ended || this.#error !== undefined) return;
    this.#error = error;
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.reject(error);
  }

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    return {
      next: () => {
        const chunk = this.#chunks.shift();
        if (chunk) {
          if (this.#chunks.length === 0) this.#stream.resume();
          return Promise.resolve({ done: false, value: chunk });
        }
        if (this.#error !== undefined) return Promise.reject(this.#error);
        if (this.#ended) return Promise.resolve({ done: true, value: undefined });
        return new Promise((resolve, reject) => {
          this.#waiting = { resolve, reject };
        });
      },
      // The reader failed (connect's pipes tell their source): nothing more is read.
      throw: (error: unknown) => {
        this.#stop();
        return Promise.reject(error);
      },
      // The reader stopped early.
      return: () => {
        this.#stop();
        return Promise.resolve({ done: true, value: undefined });
      },
    };
  }

  #stop(): void {
    this.#ended = true;
    this.#chunks.length = 0;
    // What still arrives is dropped rather than held.
    this.#stream.resume();
  }
}

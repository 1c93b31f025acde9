import type http2 from "node:http2";
import { WireHeaders } from "./wire-headers.js";

/*
 * What the platform's HTTP/2 client and server share: headers on their way out, a body as it
 * arrives. Headers coming in are read by `WireHeaders.fromNode`.
 */

/**
 * Headers as Node's outgoing headers (lowercase names), added to `headers` (a request's
 * pseudo-headers, say) so that a call makes one object; with `prefix`, each name prefixed (a
 * unary answer's trailers, sent as `trailer-<name>`).
 */
export function nodeHeaders(
  header: Headers | undefined,
  headers: http2.OutgoingHttpHeaders = {},
  prefix = "",
): http2.OutgoingHttpHeaders {
  if (header instanceof WireHeaders) return header.copyTo(headers, prefix);
  header?.forEach((value, key) => {
    headers[prefix + key] = value;
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

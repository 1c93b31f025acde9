import http2 from "node:http2";

/**
 * The HTTP/2 connection to one replica of a service, opened by the first call and shared by
 * every call after it (HTTP/2 multiplexes them), opened again once it closed, failed or was sent
 * away: after a GOAWAY the calls in flight finish on the old connection and the next ones open a
 * new one, through whatever balances the service now. A connection that carried no call for
 * `idleMs` is closed. It keeps the process alive only while it carries a call.
 */
export class ReplicaSession {
  readonly #authority: string;
  readonly #idleMs: number;
  #session: http2.ClientHttp2Session | undefined;
  /** Streams open on the current connection. */
  #open = 0;
  #idleSince = 0;
  #idleCheck: NodeJS.Timeout | undefined;

  constructor(authority: string, idleMs: number) {
    this.#authority = authority;
    this.#idleMs = idleMs;
  }

  /**
   * Opens a stream with these headers (pseudo-headers included). Throws as Node does when no
   * stream can be opened (the connection was sent away or destroyed just now, twice in a row).
   */
  request(headers: http2.OutgoingHttpHeaders): http2.ClientHttp2Stream {
    for (let attempt = 0; ; attempt++) {
      const session = this.#session ?? this.#connect();
      try {
        const stream = session.request(headers);
        this.#opened(session, stream);
        return stream;
      } catch (error) {
        // The connection closed between our last look and this call: once more on a new one.
        this.#forget(session);
        if (attempt > 0) throw error;
      }
    }
  }

  /** Closes the connection (calls in flight finish) and forgets it. */
  close(): void {
    const session = this.#session;
    if (session) {
      this.#forget(session);
      session.close();
    }
  }

  #connect(): http2.ClientHttp2Session {
    const session = http2.connect(this.#authority);
    this.#session = session;
    this.#open = 0;
    session.unref();
    // The connection's own failure (refused, reset) reaches its streams as theirs; this listener
    // only keeps it from being an uncaught error and the connection from being reused.
    session.on("error", () => this.#forget(session));
    session.on("close", () => this.#forget(session));
    // A GOAWAY: Node finishes the streams in flight and closes; new calls need a new connection.
    session.on("goaway", () => this.#forget(session));
    // One timer per connection rather than one per call: the connection idle for long enough is closed.
    this.#idleSince = performance.now();
    const check = setInterval(
      () => {
        if (
          this.#session === session &&
          this.#open === 0 &&
          performance.now() - this.#idleSince >= this.#idleMs
        ) {
          this.close();
        }
      },
      Math.max(1_000, this.#idleMs / 4),
    );
    check.unref();
    this.#idleCheck = check;
    return session;
  }

  #opened(session: http2.ClientHttp2Session, stream: http2.ClientHttp2Stream): void {
    if (session !== this.#session) return;
    if (this.#open++ === 0) session.ref();
    stream.once("close", () => {
      if (session !== this.#session) return;
      if (--this.#open === 0) {
        this.#idleSince = performance.now();
        session.unref();
      }
    });
  }

  #forget(session: http2.ClientHttp2Session): void {
    if (this.#session !== session) return;
    this.#session = undefined;
    clearInterval(this.#idleCheck);
    this.#idleCheck = undefined;
    // A connection sent away or failing may still carry calls: it no longer holds the process.
    session.unref();
  }
}

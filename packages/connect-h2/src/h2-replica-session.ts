import http2 from "node:http2";
import { pingTimeout } from "./h2-errors.js";

export type ReplicaSessionOptions = {
  /** A connection that carried no call for this long is closed. */
  idleMs: number;
  /** How often the connection is PINGed, to learn that the peer still answers. */
  pingIntervalMs: number;
  /** How long a PING may go unanswered before the connection is destroyed. */
  pingTimeoutMs: number;
};

/**
 * The HTTP/2 connection to one replica of a service, opened by the first call and shared by
 * every call after it (HTTP/2 multiplexes them), opened again once it closed, failed or was sent
 * away: after a GOAWAY the calls in flight finish on the old connection and the next ones open a
 * new one, through whatever balances the service now. A connection that carried no call for
 * `idleMs` is closed. It keeps the process alive only while it carries a call.
 *
 * A peer can stop answering without closing its socket (hung, frozen, its host gone without a
 * reset): its calls would wait for their deadlines and new ones would follow them. So the
 * connection is PINGed every `pingIntervalMs`; one whose PING goes unanswered for `pingTimeoutMs`
 * is destroyed (its calls fail as unavailable) and the next call opens a new one.
 */
export class ReplicaSession {
  readonly #authority: string;
  readonly #options: ReplicaSessionOptions;
  #session: http2.ClientHttp2Session | undefined;
  /** Streams open on the current connection. */
  #open = 0;
  #idleSince = 0;
  #timers: NodeJS.Timeout[] = [];

  constructor(authority: string, options: ReplicaSessionOptions) {
    this.#authority = authority;
    this.#options = options;
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
    const { idleMs, pingIntervalMs } = this.#options;
    const idleCheck = setInterval(
      () => {
        if (this.#session === session && this.#open === 0 && performance.now() - this.#idleSince >= idleMs) {
          this.close();
        }
      },
      Math.max(1_000, idleMs / 4),
    );
    const keepalive = setInterval(() => this.#ping(session), pingIntervalMs);
    idleCheck.unref();
    keepalive.unref();
    this.#timers = [idleCheck, keepalive];
    return session;
  }

  /** One PING; the connection is destroyed when its answer does not come in time. */
  #ping(session: http2.ClientHttp2Session): void {
    if (session.destroyed || session.closed) return;
    const { pingTimeoutMs } = this.#options;
    const timeout = setTimeout(() => {
      this.#forget(session);
      session.destroy(pingTimeout(pingTimeoutMs));
    }, pingTimeoutMs);
    timeout.unref();
    try {
      // Answered, or canceled because the connection went away otherwise: either way not silent.
      session.ping(() => clearTimeout(timeout));
    } catch {
      // Too many PINGs unanswered already (Node refuses more): the one in flight decides.
      clearTimeout(timeout);
    }
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
    for (const timer of this.#timers) clearInterval(timer);
    this.#timers = [];
    // A connection sent away or failing may still carry calls: it no longer holds the process.
    session.unref();
  }
}

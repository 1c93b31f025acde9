import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";

/** One request as the receiver got it: raw body, lower-case headers, when it arrived. */
export type ReceivedRequest = {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  /** `performance.timeOrigin + performance.now()` at arrival, for latency measurements. */
  receivedAt: number;
};

/** How the receiver answers one request. */
export type ReceiverReply = {
  status?: number;
  /** Seconds (or an HTTP date) sent as `Retry-After`. */
  retryAfter?: string;
  /** Wait this long before answering (a slow receiver, a timeout). */
  delayMs?: number;
  headers?: Record<string, string>;
  body?: string;
};

export type Receiver = {
  /** `http://127.0.0.1:<port>`; any path is accepted. */
  url: string;
  /** Every request received, in arrival order. */
  requests: ReceivedRequest[];
  /** Requests to one path. */
  at(path: string): ReceivedRequest[];
  /** Sets the answer from now on: fixed, or chosen per request (by path, by count…). */
  respond(reply: ReceiverReply | ((request: ReceivedRequest, index: number) => ReceiverReply)): void;
  /** Called on every request as it arrives. */
  onRequest(listener: (request: ReceivedRequest) => void): void;
  close(): Promise<void>;
};

/**
 * A real HTTP receiver for webhook tests on 127.0.0.1 and a free port: it records every request
 * (headers and the raw body, for signature checks) and answers as told, 204 by default.
 */
export async function startReceiver(): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const listeners: ((request: ReceivedRequest) => void)[] = [];
  let answer: (request: ReceivedRequest, index: number) => ReceiverReply = () => ({ status: 204 });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
    }
    const received: ReceivedRequest = {
      method: req.method ?? "",
      path: req.url ?? "/",
      headers,
      body: Buffer.concat(chunks).toString("utf8"),
      receivedAt: performance.timeOrigin + performance.now(),
    };
    const index = requests.push(received) - 1;
    for (const listener of listeners) listener(received);
    const reply = answer(received, index);
    if (reply.delayMs) await sleep(reply.delayMs);
    if (res.destroyed) return;
    const extra: Record<string, string> = { ...reply.headers };
    if (reply.retryAfter !== undefined) extra["retry-after"] = reply.retryAfter;
    res.writeHead(reply.status ?? 204, extra);
    res.end(reply.body ?? "");
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    at: (path) => requests.filter((request) => request.path === path),
    respond(reply) {
      answer = typeof reply === "function" ? reply : () => reply;
    },
    onRequest(listener) {
      listeners.push(listener);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

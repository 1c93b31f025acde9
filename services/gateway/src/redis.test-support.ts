import { createConnection, createServer, type Server, type Socket } from "node:net";

/** Listens on a free port of 127.0.0.1 and says which. */
async function listen(server: Server): Promise<number> {
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/**
 * The commands a RESP client sent in `buffer` (each an array of bulk strings, as clients send
 * them), and what is left of it for the next read.
 */
function commandsIn(buffer: Buffer): { commands: string[][]; rest: Buffer } {
  const commands: string[][] = [];
  let at = 0;
  for (;;) {
    const lineEnd = (from: number) => buffer.indexOf("\r\n", from);
    const headerEnd = lineEnd(at);
    if (headerEnd < 0 || buffer[at] !== 0x2a /* * */) break;
    const count = Number(buffer.subarray(at + 1, headerEnd).toString());
    const args: string[] = [];
    let next = headerEnd + 2;
    for (let i = 0; i < count; i++) {
      const end = lineEnd(next);
      if (end < 0) break;
      const length = Number(buffer.subarray(next + 1, end).toString());
      if (buffer.length < end + 2 + length + 2) break;
      args.push(buffer.subarray(end + 2, end + 2 + length).toString());
      next = end + 2 + length + 2;
    }
    if (args.length < count) break;
    commands.push(args);
    at = next;
  }
  return { commands, rest: buffer.subarray(at) };
}

const bulk = (text: string) => `$${Buffer.byteLength(text)}\r\n${text}\r\n`;
const array = (items: string[]) => `*${items.length}\r\n${items.join("")}`;
/** Pub/sub messages in RESP3, which the client asks for (HELLO 3) as it does of a real sentinel. */
const push = (items: string[]) => `>${items.length}\r\n${items.join("")}`;

export type FakeSentinel = {
  port: number;
  /** The port it names as the primary, and how long it takes to answer that question. */
  primaryPort: number;
  answerDelayMs: number;
  /** Accepts connections and reads them, but answers nothing: a sentinel hung (stopped, overloaded). */
  hung: boolean;
  /** How long it takes to confirm a subscription. */
  subscribeDelayMs: number;
  /** Questions for the primary received and not yet answered. */
  unanswered: number;
  /** Connections subscribed to `+switch-master` now. */
  subscribers(): number;
  /** Announces `+switch-master` to the subscribed connections. */
  announceSwitch(from: number, to: number): void;
  close(): Promise<void>;
};

/**
 * A Sentinel of the test's own, naming `name`'s primary on 127.0.0.1 as told: what a real Sentinel
 * set decides on its own (and when) is set here, so that a race with a client's reconnection can be
 * made to happen every time. It answers what ioredis asks a sentinel (in RESP3, as a real one
 * does once asked with HELLO 3): the primary's address, the other sentinels (none) and a
 * subscription to `+switch-master`; any other command with OK. Each answer can be made late, or
 * never given.
 */
export async function startFakeSentinel(name: string, primaryPort: number): Promise<FakeSentinel> {
  const subscribed = new Set<Socket>();
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => {
      sockets.delete(socket);
      subscribed.delete(socket);
    });
    socket.on("error", () => {});
    let buffer: Buffer = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      const read = commandsIn(Buffer.concat([buffer, chunk]));
      buffer = read.rest;
      for (const [command = "", ...args] of read.commands) answer(socket, command.toLowerCase(), args);
    });
  });
  const sentinel: FakeSentinel = {
    port: await listen(server),
    primaryPort,
    answerDelayMs: 0,
    hung: false,
    subscribeDelayMs: 0,
    unanswered: 0,
    subscribers: () => subscribed.size,
    announceSwitch(from, to) {
      const message = `${name} 127.0.0.1 ${from} 127.0.0.1 ${to}`;
      for (const socket of subscribed) {
        socket.write(push([bulk("message"), bulk("+switch-master"), bulk(message)]));
      }
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((done) => server.close(done));
    },
  };
  function answer(socket: Socket, command: string, args: string[]) {
    if (sentinel.hung) return;
    const [sub = "", about] = args.map((arg) => arg.toLowerCase());
    if (command === "sentinel" && sub === "get-master-addr-by-name" && about === name.toLowerCase()) {
      // The address as it is when the answer leaves, like a sentinel that answered late.
      sentinel.unanswered += 1;
      setTimeout(() => {
        sentinel.unanswered -= 1;
        socket.write(array([bulk("127.0.0.1"), bulk(String(sentinel.primaryPort))]));
      }, sentinel.answerDelayMs);
    } else if (command === "sentinel" && sub === "sentinels") {
      socket.write("*0\r\n");
    } else if (command === "hello") {
      socket.write(
        `%3\r\n${bulk("server")}${bulk("redis")}${bulk("proto")}:3\r\n${bulk("mode")}${bulk("sentinel")}`,
      );
    } else if (command === "subscribe") {
      subscribed.add(socket);
      const confirm = push([bulk("subscribe"), bulk(args[0] ?? ""), ":1\r\n"]);
      setTimeout(() => socket.write(confirm), sentinel.subscribeDelayMs);
    } else {
      socket.write("+OK\r\n");
    }
  }
  return sentinel;
}

export type Doorway = {
  port: number;
  /** Closes every connection through it and refuses new ones, as a server that died. */
  close(): Promise<void>;
};

/**
 * A port of its own in front of the Redis at `host`:`port`: a Redis that can be made to die, or,
 * with `replyDelayMs`, one whose every reply reaches the client that much later (in the order Redis
 * sent them), as a gateway that is busy or descheduled reads them.
 */
export async function startDoorway(
  upstreamAt: { host: string; port: number },
  options: { replyDelayMs?: number } = {},
): Promise<Doorway> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = createConnection(upstreamAt);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("error", () => {});
      socket.on("close", () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    const { replyDelayMs } = options;
    if (replyDelayMs === undefined) upstream.pipe(client);
    else
      upstream.on("data", (chunk) => setTimeout(() => client.writable && client.write(chunk), replyDelayMs));
  });
  return {
    port: await listen(server),
    async close() {
      const closed = new Promise((done) => server.close(done));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

import { createServer } from "node:net";
import { answers as answersAt } from "@evalp/local-servers";

/**
 * Ports are handed out below Linux's ephemeral range (32768 and up): a port the kernel picked
 * for `listen(0)` is also the kind it picks for an outgoing connection's local port, and one of
 * the many connections a test's processes open could take it before the process told to listen
 * there does (EADDRINUSE, exit 1). Each vitest worker has a block of its own, so that two test
 * files running side by side never get the same one.
 */
const FIRST_PORT = 20_000;
const BLOCK = 1_000;
const BLOCKS = 12;
const block = FIRST_PORT + (Number(process.env.VITEST_POOL_ID ?? 0) % BLOCKS) * BLOCK;
let next = Math.floor(Math.random() * BLOCK);

/**
 * Whether a server could listen on `port` now. The error listener is on the server before it
 * listens: racing `once(server, "listening")` with `once(server, "error")` left the EADDRINUSE of
 * a taken port unhandled, which ended the process instead of moving on to the next port.
 */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** A port that is free on 127.0.0.1 and handed to no one else in this run, for a process that must be told its port. */
export async function freePort(): Promise<number> {
  for (let tried = 0; tried < BLOCK; tried++) {
    const port = block + (next++ % BLOCK);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port in ${block}–${block + BLOCK - 1}`);
}

/** Whether something accepts TCP connections on 127.0.0.1:`port` (a server a test started is up). */
export function answers(port: number): Promise<boolean> {
  return answersAt("127.0.0.1", port);
}

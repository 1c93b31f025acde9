import { once } from "node:events";
import { createServer } from "node:net";

/** A port that was free a moment ago on 127.0.0.1, for a process that must be told its port. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, "close");
  return port;
}

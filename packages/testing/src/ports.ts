import { once } from "node:events";
import { connect, createServer } from "node:net";

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

/** Whether something accepts TCP connections on 127.0.0.1:`port` (a server a test started is up). */
export async function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

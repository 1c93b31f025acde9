import { once } from "node:events";
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { answers, bindAddress, isLoopback } from "./reachability.js";

describe("isLoopback", () => {
  it("is 127.0.0.0/8, ::1 and localhost, as URL.hostname gives them", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "[::1]", "localhost", "LOCALHOST"]) {
      expect(isLoopback(host), host).toBe(true);
    }
    for (const host of ["10.0.0.1", "128.0.0.1", "[::2]", "db.example.com", "127.0.0.1.example.com", ""]) {
      expect(isLoopback(host), host).toBe(false);
    }
  });
});

describe("bindAddress", () => {
  it("listens on 127.0.0.1 for localhost and on the address itself otherwise", () => {
    expect(bindAddress("localhost")).toBe("127.0.0.1");
    expect(bindAddress("[::1]")).toBe("::1");
    expect(bindAddress("127.0.0.2")).toBe("127.0.0.2");
  });
});

describe("answers", () => {
  it("is true while something listens and false once it stops", async () => {
    const server = createServer((socket) => socket.destroy());
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as { port: number };
    expect(await answers("127.0.0.1", port)).toBe(true);
    server.close();
    await once(server, "close");
    expect(await answers("127.0.0.1", port)).toBe(false);
  });
});

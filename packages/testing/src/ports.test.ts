import { once } from "node:events";
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { freePort } from "./ports.js";

describe("freePort", () => {
  it("passes over a port something listens on, and the process goes on", async () => {
    const first = await freePort();
    // The port it tries next: the one after, within its block of 1,000.
    const blockStart = first - ((first - 20_000) % 1_000);
    const taken = blockStart + ((first - blockStart + 1) % 1_000);
    const squatter = createServer();
    squatter.listen(taken, "127.0.0.1");
    await once(squatter, "listening");
    try {
      const next = await freePort();
      expect(next).not.toBe(taken);
      expect(next).not.toBe(first);
    } finally {
      squatter.close();
    }
  });
});

import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger, logRuntime } from "./logger.js";

/** A logger whose JSON lines are collected. */
function capture(level: string) {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()));
      done();
    },
  });
  return { logger: createLogger("svc", level, destination), lines };
}

describe("logRuntime", () => {
  it("logs the Node.js version the process runs on, once, with the service's name", () => {
    const { logger, lines } = capture("info");
    logRuntime(logger);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      service: "svc",
      msg: "starting",
      node: process.version,
      pid: process.pid,
    });
  });
});

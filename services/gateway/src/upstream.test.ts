import { AppError, IDEMPOTENCY_ID_HEADER, IDEMPOTENCY_SEAL_HEADER } from "@evalp/kit";
import type { FastifyRequest } from "fastify";
import { describe, expect, it } from "vitest";
import { callOptions } from "./upstream.js";

/** The parts of a request `callOptions` reads. */
function requestWith(parts: Pick<FastifyRequest, "deadline" | "idempotency">): FastifyRequest {
  return { id: "req-1", ...parts } as FastifyRequest;
}

describe("callOptions", () => {
  it("gives each call UPSTREAM_TIMEOUT_MS, never past the request's deadline, and none after it", () => {
    const long = callOptions(requestWith({ deadline: { at: Date.now() + 60_000, callMs: 10_000 } }));
    expect(long.timeoutMs).toBe(10_000);
    const short = callOptions(requestWith({ deadline: { at: Date.now() + 500, callMs: 10_000 } }));
    expect(short.timeoutMs).toBeGreaterThan(0);
    expect(short.timeoutMs).toBeLessThanOrEqual(500);
    const late = callOptions(requestWith({ deadline: { at: Date.now() - 1, callMs: 10_000 } }));
    expect(() => late.timeoutMs).toThrow(AppError);
    expect(() => late.timeoutMs).toThrow(expect.objectContaining({ code: "upstream_timeout" }));
  });

  it("tells the plane the request's Idempotency-Key when it holds one", () => {
    const plane = { id: "key-identity", fingerprint: "f", sealKey: "k".repeat(43) };
    const held = callOptions(
      requestWith({
        idempotency: { recordKey: "r", lockKey: "l", owner: "o", fingerprint: "f", plane },
        deadline: undefined,
      }),
    );
    expect(held.headers[IDEMPOTENCY_ID_HEADER]).toBe("key-identity");
    expect(held.headers[IDEMPOTENCY_SEAL_HEADER]).toBe(plane.sealKey);
    expect(
      callOptions(requestWith({ idempotency: undefined, deadline: undefined })).headers,
    ).not.toHaveProperty(IDEMPOTENCY_ID_HEADER);
  });
});

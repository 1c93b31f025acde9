import { create } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextValues,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { CheckRequestSchema, CheckResponseSchema, HealthService } from "@evalp/proto/common/v1/health";
import { describe, expect, it, vi } from "vitest";
import { createLogger } from "../telemetry/logger.js";
import { requestContext, requestContextInterceptor } from "./request-context.js";

/** A logger writing its lines into `lines`, at `level`. */
function capture(level: string) {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger("test", level, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { lines, logger };
}

function call(headers: Record<string, string>): UnaryRequest {
  const method = HealthService.method.check;
  return {
    stream: false,
    service: HealthService,
    method,
    requestMethod: "POST",
    url: "http://control/evalp.common.v1.HealthService/Check",
    signal: new AbortController().signal,
    header: new Headers(headers),
    contextValues: createContextValues(),
    message: create(CheckRequestSchema),
  } as unknown as UnaryRequest;
}

/** The answer to a call (its request as an interceptor's next step is handed it). */
const answer = (req: { service: UnaryRequest["service"]; method: unknown }): UnaryResponse =>
  ({
    stream: false,
    service: req.service,
    method: req.method,
    header: new Headers(),
    trailer: new Headers(),
    message: create(CheckResponseSchema, { ready: true }),
  }) as unknown as UnaryResponse;

describe("the request context of a call a plane serves", () => {
  it("gives the handler the request id, the actor and a logger bound to them", async () => {
    const { lines, logger } = capture("info");
    const req = call({ "x-request-id": "req_1", "x-evalp-actor-kind": "api_key", "x-evalp-actor-id": "k1" });
    await requestContextInterceptor(logger)(async (seen) => {
      const context = requestContext(seen.contextValues);
      expect(context.requestId).toBe("req_1");
      expect(context.actor).toEqual({ kind: "api_key", id: "k1" });
      context.logger.warn("from the handler");
      return answer(seen);
    })(req);
    expect(lines.find((line) => line.msg === "from the handler")).toMatchObject({
      request_id: "req_1",
      rpc: "Check",
    });
  });

  it("logs one line per call, with its outcome, where the level lets it (debug for health checks)", async () => {
    const { lines, logger } = capture("debug");
    const intercept = requestContextInterceptor(logger);
    await intercept(async (req) => answer(req))(call({ "x-request-id": "req_2" }));
    await expect(
      intercept(async () => {
        throw new ConnectError("gone", Code.NotFound);
      })(call({ "x-request-id": "req_3" })),
    ).rejects.toThrow("gone");
    const rpcLines = lines.filter((line) => line.msg === "rpc");
    expect(rpcLines).toMatchObject([
      { request_id: "req_2", rpc: "Check", code: "ok", level: 20 },
      { request_id: "req_3", rpc: "Check", code: "NotFound", level: 20 },
    ]);
    expect(typeof rpcLines[0]?.duration_ms).toBe("number");
  });

  it("binds no logger for a call that logs nothing, and one when its handler logs", async () => {
    const { lines, logger } = capture("warn");
    const child = vi.spyOn(logger, "child");
    const intercept = requestContextInterceptor(logger);
    await intercept(async (req) => answer(req))(call({ "x-request-id": "req_4" }));
    expect(child).not.toHaveBeenCalled();
    expect(lines).toEqual([]);
    await intercept(async (req) => {
      requestContext(req.contextValues).logger.error("the handler failed");
      return answer(req);
    })(call({ "x-request-id": "req_5" }));
    expect(child).toHaveBeenCalledTimes(1);
    expect(lines).toMatchObject([{ request_id: "req_5", msg: "the handler failed" }]);
  });
});

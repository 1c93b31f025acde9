import http2 from "node:http2";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { connectNodeAdapter, createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@evalp/proto/grpc/health/v1/health";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { errorInterceptor } from "../rpc/connect-errors.js";
import { listen } from "../rpc/connect-server.js";
import { requestContextInterceptor } from "../rpc/request-context.js";
import { LIVENESS_SERVICE, serveGrpcHealth } from "./grpc-health.js";

const servers: http2.Http2Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

/** Health alone on a server, over the gRPC protocol, with a readiness the test sets. */
async function healthServer() {
  const state = { ready: true };
  const closing = new AbortController();
  const server = http2.createServer(
    connectNodeAdapter({
      routes(router) {
        serveGrpcHealth(router, {
          readiness: async () => ({ ready: state.ready, failing: state.ready ? [] : ["postgres"] }),
          services: () => new Set(["evalp.test.v1.TestService"]),
          closing: closing.signal,
          interceptors: [requestContextInterceptor(pino({ level: "silent" })), errorInterceptor],
          watchIntervalMs: 10,
        });
      },
    }),
  );
  servers.push(server);
  const port = await listen(server, 0, "127.0.0.1");
  const client = createClient(Health, createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` }));
  return { state, closing, client };
}

describe("serveGrpcHealth", () => {
  it("answers readiness for the server and its services, liveness whatever the dependencies", async () => {
    const { state, client } = await healthServer();
    for (const service of ["", "evalp.test.v1.TestService"]) {
      expect((await client.check({ service })).status, service).toBe(Status.SERVING);
    }
    state.ready = false;
    for (const service of ["", "evalp.test.v1.TestService"]) {
      expect((await client.check({ service })).status, service).toBe(Status.NOT_SERVING);
    }
    expect((await client.check({ service: LIVENESS_SERVICE })).status).toBe(Status.SERVING);
    const unknown = await client.check({ service: "evalp.other.v1.OtherService" }).catch((e) => e);
    expect(unknown).toBeInstanceOf(ConnectError);
    expect((unknown as ConnectError).code).toBe(Code.NotFound);
  });

  it("watches: the status at once, each change, and an end with NOT_SERVING when the server closes", async () => {
    const { state, closing, client } = await healthServer();
    const seen: Status[] = [];
    for await (const { status } of client.watch({ service: "" })) {
      seen.push(status);
      // Each status seen moves the readiness on; the last closes the server.
      if (seen.length === 1) state.ready = false;
      if (seen.length === 2) state.ready = true;
      if (seen.length === 3) closing.abort();
    }
    expect(seen).toEqual([Status.SERVING, Status.NOT_SERVING, Status.SERVING, Status.NOT_SERVING]);
  });

  it("watches an unknown service as SERVICE_UNKNOWN rather than failing", async () => {
    const { client } = await healthServer();
    const watching = new AbortController();
    for await (const { status } of client.watch(
      { service: "evalp.other.v1.OtherService" },
      { signal: watching.signal },
    )) {
      expect(status).toBe(Status.SERVICE_UNKNOWN);
      break;
    }
    watching.abort();
    expect((await client.check({ service: LIVENESS_SERVICE })).status).toBe(Status.SERVING);
  });

  it("reports NOT_SERVING once closing, liveness aside", async () => {
    const { closing, client } = await healthServer();
    closing.abort();
    expect((await client.check({ service: "" })).status).toBe(Status.NOT_SERVING);
    expect((await client.check({ service: LIVENESS_SERVICE })).status).toBe(Status.SERVING);
  });
});

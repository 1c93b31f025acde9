import http2 from "node:http2";
import { Code, createClient } from "@connectrpc/connect";
import { connectNodeAdapter, createConnectTransport } from "@connectrpc/connect-node";
import { HealthService } from "@evalp/proto/common/v1/health";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { keySetConfig, serviceVerifier } from "../config/config.js";
import { createServiceTransport, serviceCaller, WIRE_READ_OPTIONS } from "../rpc/connect-client.js";
import { createConnectServer, listen } from "../rpc/connect-server.js";
import { callerTable } from "./service-callers.js";
import { generateServiceKeySet, requireServiceTokens } from "./service-tokens.js";

/* Service tokens between the platform's own hop and connect-node's stock client and server. */

const keys = keySetConfig(generateServiceKeySet(["test"]));
const caller = serviceCaller(keys, "test");

describe("service tokens between the platform's and the stock ends", () => {
  it("are sent by the platform's client and checked by a stock server", async () => {
    const server = http2.createServer(
      connectNodeAdapter({
        routes: (router) => router.service(HealthService, { check: async () => ({ ready: true }) }),
        interceptors: [
          requireServiceTokens(serviceVerifier(keys, "stock"), callerTable({ test: [HealthService] })),
        ],
        ...WIRE_READ_OPTIONS,
      }),
    );
    const sessions = new Set<http2.ServerHttp2Session>();
    server.on("session", (session) => sessions.add(session));
    const port = await listen(server, 0, "127.0.0.1");
    const url = `http://127.0.0.1:${port}`;
    try {
      const withTokens = createClient(
        HealthService,
        createServiceTransport("stock", () => url, 5_000, caller),
      );
      expect((await withTokens.check({})).ready).toBe(true);
      const without = createClient(HealthService, createConnectTransport({ baseUrl: url, httpVersion: "2" }));
      await expect(without.check({})).rejects.toMatchObject({ code: Code.Unauthenticated });
    } finally {
      await new Promise((resolve) => {
        server.close(resolve);
        for (const session of sessions) session.destroy();
      });
    }
  });

  it("are required by the platform's server from a stock client", async () => {
    const rpc = createConnectServer({
      routes: () => {},
      logger: pino({ level: "silent" }),
      checks: [],
      tokens: serviceVerifier(keys, "peer"),
      callers: callerTable({}),
    });
    const port = await listen(rpc.server, 0, "127.0.0.1");
    try {
      const url = `http://127.0.0.1:${port}`;
      const stock = createClient(HealthService, createConnectTransport({ baseUrl: url, httpVersion: "2" }));
      await expect(stock.check({})).rejects.toMatchObject({ code: Code.Unauthenticated });
      const ours = createClient(
        HealthService,
        createServiceTransport("peer", () => url, 5_000, caller),
      );
      expect((await ours.check({})).ready).toBe(true);
    } finally {
      await rpc.close();
    }
  });
});

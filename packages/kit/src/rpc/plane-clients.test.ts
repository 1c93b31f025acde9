import type { ServerHttp2Session } from "node:http2";
import { HealthService } from "@evalp/proto/common/v1/health";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { callerTable } from "../auth/service-callers.js";
import { generateServiceKeySet } from "../auth/service-tokens.js";
import { keySetConfig, serviceVerifier } from "../config/config.js";
import { serviceCaller } from "./connect-client.js";
import { type ConnectServer, createConnectServer, listen } from "./connect-server.js";
import { type Plane, planeClients } from "./plane-clients.js";

const logger = pino({ level: "silent" });
const KEYS = keySetConfig(generateServiceKeySet(["test"]));
const caller = serviceCaller(KEYS, "test");
const running: ConnectServer[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.close()));
});

/** A replica of `plane` (it accepts only tokens addressed to it), counting its sessions and calls. */
async function replicaOf(plane: Plane) {
  const seen = { sessions: new Set<ServerHttp2Session>(), calls: 0 };
  const rpc = createConnectServer({
    routes: () => {},
    logger,
    tokens: serviceVerifier(KEYS, plane),
    callers: callerTable({}),
    checks: [
      {
        name: "counted",
        check: async () => {
          seen.calls += 1;
        },
      },
    ],
  });
  rpc.server.on("session", (session) => seen.sessions.add(session));
  running.push(rpc);
  const port = await listen(rpc.server, 0, "127.0.0.1");
  return { seen, url: `http://127.0.0.1:${port}` };
}

describe("planeClients", () => {
  it("reaches the plane named, at the address its setting holds when the first call goes", async () => {
    const [control, webhooks] = [await replicaOf("control"), await replicaOf("webhooks")];
    const config = { CONTROL_URL: "", WEBHOOKS_URL: "", UPSTREAM_TIMEOUT_MS: 5_000 };
    const health = planeClients("webhooks", config, caller)(HealthService);
    // Settled after the clients were made, as for planes that start in any order.
    Object.assign(config, { CONTROL_URL: control.url, WEBHOOKS_URL: webhooks.url });
    expect((await health.check({})).ready).toBe(true);
    expect(webhooks.seen.calls).toBe(1);
    expect(control.seen.calls).toBe(0);
  });

  it("carries every service of a plane over one connection", async () => {
    const platform = await replicaOf("platform");
    const clientOf = planeClients(
      "platform",
      { PLATFORM_URL: platform.url, UPSTREAM_TIMEOUT_MS: 5_000 },
      caller,
    );
    const [first, second] = [clientOf(HealthService), clientOf(HealthService)];
    await first.check({});
    await second.check({});
    expect(platform.seen.calls).toBe(2);
    expect(platform.seen.sessions.size).toBe(1);
  });
});

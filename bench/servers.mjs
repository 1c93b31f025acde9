// The two baselines of `bench/run.mjs`, each run as its own process:
// - `node bench/servers.mjs hello`: A0, a bare Fastify hello endpoint (the ceiling of this machine);
// - `node bench/servers.mjs monolith`: A1, one Fastify + `pg` process that does what `GET APP`
//   does end to end (API-key authentication by the key's SHA-256 joined to its environment and
//   app, the reach and scope checks, then the same primary-key SELECT) — the monolith a user
//   might write instead of the gateway → Connect → control path; and B1m, the same process
//   answering `POST ENV/subjects/batch` with the import's transaction (bench/import-monolith.mjs).
// - `node bench/servers.mjs receiver`: the webhook receiver of C1 and C2: answers every POST 204
//   and keeps, per path, how many arrived and when each event did (by the first subject id of
//   its `data.subject_ids`, else its `webhook-id`), on `performance.timeOrigin + now()`, a clock
//   the harness shares; `GET /stats?prefix=/x` sums the paths under /x (`&arrivals=1` with every
//   arrival), `DELETE /stats` forgets everything.
// - `node bench/servers.mjs hop-connect`: H1's server, a plane's RPC server as every service
//   builds it (kit's `serveService`: connect's router on node:http2 streams, the platform's interceptors)
//   serving only `HealthService.Check` with no checks, so a call is the hop and nothing else;
// - `node bench/servers.mjs hop-h2`: H0's server, the same call answered by raw node:http2 (a
//   stream handler writing the response's bytes): what HTTP/2 itself costs, the hop's floor;
// - `node bench/servers.mjs hop-client <connect|h2> <url> <seconds> <concurrency> [rate]`: calls
//   Check for that long, as many at once (or `rate` a second, paced), through the platform's own
//   client (kit's `createServiceTransport`, as the gateway calls a plane) or raw node:http2, and
//   prints `{calls, failed, seconds, cpuUs, latenciesMs}` (its own CPU, from process.cpuUsage).
// PORT and (for the monolith) DATABASE_URL and DATABASE_POOL_SIZE come from the environment.

import { createPrivateKey, createPublicKey } from "node:crypto";
import { createServer } from "node:http";
import http2 from "node:http2";
import { setTimeout as sleep } from "node:timers/promises";
import { createClient } from "@connectrpc/connect";
import {
  callerTable,
  createLogger,
  createServiceTransport,
  serveService,
  serviceCaller,
  serviceVerifier,
} from "@evalp/kit";
import { HealthService } from "@evalp/proto/common/v1/health";
import Fastify from "fastify";
import pg from "pg";
import { monolithPrincipal, registerImport } from "./import-monolith.mjs";
import { setting } from "./settings.mjs";

const mode = process.argv[2];
/**
 * The hop's client and server sign and check service tokens as the platform's do: the client as
 * `bench`, with a key both ends derive from a fixed seed (they run as separate processes; a
 * benchmark's key guards nothing).
 */
const HOP_KEY = createPrivateKey({
  key: Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), Buffer.alloc(32, 7)]),
  format: "der",
  type: "pkcs8",
});
const HOP_KEYS = {
  SERVICE_KEY: HOP_KEY.export({ type: "pkcs8", format: "pem" }),
  SERVICE_PUBLIC_KEYS: JSON.stringify({
    bench: createPublicKey(HOP_KEY).export({ type: "spki", format: "pem" }),
  }),
  developmentServiceKeys: {},
};
const app = Fastify({ logger: false });

if (mode === "hello") {
  app.get("/hello", async () => ({ hello: "world" }));
} else if (mode === "monolith") {
  const poolOptions = {
    connectionString: setting("DATABASE_URL"),
    max: Number(setting("DATABASE_POOL_SIZE") ?? 10),
  };
  const pool = new pg.Pool(poolOptions);
  const fail = (reply, status, code) => reply.code(status).send({ detail: { code, message: code } });
  app.get("/v1/organizations/:organization_id/apps/:app_id", async (request, reply) => {
    const principal = await monolithPrincipal(pool, request.headers["x-api-key"]);
    if (!principal) return fail(reply, 401, "unauthenticated");
    if (principal.revoked) return fail(reply, 401, "api_key_revoked");
    const { organization_id: organizationId, app_id: appId } = request.params;
    if (principal.organization_id !== organizationId) return fail(reply, 404, "not_found");
    if (principal.app_id !== appId) return fail(reply, 403, "forbidden");
    if (!principal.scopes.includes("org:read")) return fail(reply, 403, "required_scope");
    const found = await pool.query({
      name: "monolith_app",
      text: "SELECT id, organization_id, slug, name, description, created_at FROM control.apps WHERE id = $1 AND organization_id = $2",
      values: [appId, organizationId],
    });
    const row = found.rows[0];
    if (!row) return fail(reply, 404, "not_found");
    return {
      id: row.id,
      organization_id: row.organization_id,
      slug: row.slug,
      name: row.name,
      description: row.description ?? null,
      created_at: row.created_at.toISOString(),
    };
  });
  registerImport(app, poolOptions);
  app.addHook("onClose", () => pool.end());
} else if (mode === "receiver") {
  // A plain node:http server: the receiver must cost the platform's measurement as little as it can.
  const paths = new Map();
  const at = (path) => {
    if (!paths.has(path)) paths.set(path, { count: 0, arrivals: [] });
    return paths.get(path);
  };
  const server = createServer((request, response) => {
    const url = new URL(request.url, "http://receiver");
    if (url.pathname === "/stats") {
      if (request.method === "DELETE") paths.clear();
      const prefix = url.searchParams.get("prefix") ?? "/";
      const stats = { count: 0, arrivals: [] };
      for (const [path, entry] of paths) {
        if (!path.startsWith(prefix)) continue;
        stats.count += entry.count;
        if (url.searchParams.get("arrivals") === "1") stats.arrivals.push(...entry.arrivals);
      }
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify(stats));
      return;
    }
    const chunks = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", () => {
      const receivedAt = performance.timeOrigin + performance.now();
      const entry = at(url.pathname);
      entry.count += 1;
      let id = request.headers["webhook-id"] ?? "";
      try {
        id = JSON.parse(Buffer.concat(chunks).toString("utf8")).data?.subject_ids?.[0] ?? id;
      } catch {
        // not JSON: counted by its webhook-id
      }
      entry.arrivals.push([id, receivedAt]);
      response.writeHead(204);
      response.end();
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(Number(setting("PORT") ?? 0), "127.0.0.1", () => process.stdout.write("listening\n"));
  process.on("SIGTERM", () => server.close(() => process.exit(0)));
} else if (mode === "hop-connect") {
  const running = await serveService(
    // HealthService is open to every caller with a valid token: the table grants nothing more.
    { name: "hop", routes: () => {}, checks: [], callers: callerTable({}) },
    {
      logger: createLogger("hop", "warn"),
      host: "127.0.0.1",
      rpcPort: Number(setting("PORT") ?? 0),
      opsPort: 0,
      tokens: serviceVerifier(HOP_KEYS, "hop"),
    },
  );
  process.stdout.write("listening\n");
  process.on("SIGTERM", () => running.close().then(() => process.exit(0)));
} else if (mode === "hop-h2") {
  // CheckResponse{ready: true} on the wire: field 1, varint, 1.
  const body = Buffer.from([0x08, 0x01]);
  const server = http2.createServer();
  server.on("stream", (stream) => {
    stream.on("data", () => {});
    stream.on("end", () => {
      stream.respond({ ":status": 200, "content-type": "application/proto" });
      stream.end(body);
    });
  });
  server.listen(Number(setting("PORT") ?? 0), "127.0.0.1", () => process.stdout.write("listening\n"));
  process.on("SIGTERM", () => server.close(() => process.exit(0)));
} else if (mode === "hop-client") {
  const [kind, url, seconds, concurrency, rate] = process.argv.slice(3);
  let call;
  let session;
  if (kind === "connect") {
    const client = createClient(
      HealthService,
      createServiceTransport("hop", () => url, 10_000, serviceCaller(HOP_KEYS, "bench")),
    );
    call = () => client.check({});
  } else {
    session = http2.connect(url);
    const path = "/evalp.common.v1.HealthService/Check";
    call = () =>
      new Promise((resolve, reject) => {
        const stream = session.request({
          ":method": "POST",
          ":path": path,
          "content-type": "application/proto",
        });
        stream.on("response", (headers) => {
          if (headers[":status"] !== 200) reject(new Error(`status ${headers[":status"]}`));
        });
        stream.on("data", () => {});
        stream.on("end", resolve);
        stream.on("error", reject);
        stream.end();
      });
  }
  // Warm the connection and the code paths, then start the clock when the harness says so (it
  // reads the server's CPU at that moment).
  for (let i = 0; i < 500; i++) await call();
  process.stdout.write("warm\n");
  await new Promise((resolve) => process.stdin.once("data", resolve));
  const latencies = [];
  let calls = 0;
  let failed = 0;
  const timed = async () => {
    const started = performance.now();
    try {
      await call();
      calls += 1;
      latencies.push(performance.now() - started);
    } catch {
      failed += 1;
    }
  };
  const cpuBefore = process.cpuUsage();
  const startedAt = performance.now();
  const endAt = startedAt + Number(seconds) * 1000;
  if (rate) {
    // Paced: every millisecond, as many calls start as the rate owes by then; calls overlap as they would.
    const inFlight = new Set();
    let started = 0;
    while (performance.now() < endAt) {
      const owed = Math.floor(((performance.now() - startedAt) / 1000) * Number(rate));
      for (; started < owed; started++) {
        const p = timed().finally(() => inFlight.delete(p));
        inFlight.add(p);
      }
      await sleep(1);
    }
    await Promise.all(inFlight);
  } else {
    const worker = async () => {
      while (performance.now() < endAt) await timed();
    };
    await Promise.all(Array.from({ length: Number(concurrency) }, worker));
  }
  const elapsed = (performance.now() - startedAt) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  session?.close();
  const result = {
    calls,
    failed,
    seconds: elapsed,
    cpuUs: cpu.user + cpu.system,
    latenciesMs: rate ? latencies : [],
  };
  // A pipe is written asynchronously: exit once the line is out.
  process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
} else {
  console.error("usage: node bench/servers.mjs hello|monolith|receiver|hop-connect|hop-h2|hop-client …");
  process.exit(2);
}

if (mode === "hello" || mode === "monolith") {
  await app.listen({ host: "127.0.0.1", port: Number(setting("PORT") ?? 0) });
  process.stdout.write("listening\n");
  process.on("SIGTERM", () => {
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}

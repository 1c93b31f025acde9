/*
 * A process started as every `main.ts` starts one (run by traces.int.test.ts in a Node of its
 * own, argv: the database URL): tracing's module hooks first, the rest imported after. One
 * query in one span, then the spans are exported and it exits.
 */
import { preloadTelemetry } from "@evalp/kit/telemetry";

preloadTelemetry();
const { createPool, loadConfig, startTelemetry, withSpan } = await import("@evalp/kit");
const config = loadConfig({ ...process.env, NODE_ENV: "test" });
const telemetry = startTelemetry(config, "preloaded");
const pool = createPool({ databaseUrl: process.argv[2] ?? "", schema: "public", max: 1 });
await withSpan("preloaded work", {}, async () => {
  await pool.query("SELECT 1");
});
await pool.end();
await telemetry?.release();

import { redisServerBinary } from "./binaries.js";
import { type ServerProcess, serverProcess } from "./server-process.js";

export type RedisServerOptions = {
  host: string;
  port: number;
  /** `redis-server`; default: found as redisServerBinary finds it. */
  binary?: string;
  /**
   * With a directory: an append-only file there, so that what Redis holds outlives a restart.
   * Without: nothing is persisted, and a restart starts empty.
   */
  dataDir?: string;
  logFile?: string;
  detached?: boolean;
  stopSignal?: NodeJS.Signals;
};

/** `redis-server` on one address, without snapshots; persisted to an append-only file when given a directory. */
export function redisServer(options: RedisServerOptions): ServerProcess {
  const args = ["--port", String(options.port), "--bind", options.host, "--save", ""];
  args.push(
    ...(options.dataDir ? ["--dir", options.dataDir, "--appendonly", "yes"] : ["--appendonly", "no"]),
  );
  return serverProcess({
    name: "redis-server",
    binary: options.binary ?? redisServerBinary(),
    args,
    host: options.host,
    port: options.port,
    ...(options.logFile ? { logFile: options.logFile } : {}),
    ...(options.detached !== undefined ? { detached: options.detached } : {}),
    ...(options.stopSignal ? { stopSignal: options.stopSignal } : {}),
  });
}

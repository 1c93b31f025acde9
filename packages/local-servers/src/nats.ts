import { natsServerBinary } from "./binaries.js";
import { type ServerProcess, serverProcess } from "./server-process.js";

export type NatsServerOptions = {
  host: string;
  port: number;
  /** JetStream's store (`-sd`); kept between starts. */
  storeDir: string;
  /** `nats-server`; default: found as natsServerBinary finds it. */
  binary?: string;
  /** Further arguments (`-c nats.conf`, cluster routes, a server name). */
  args?: string[];
  logFile?: string;
  detached?: boolean;
  stopSignal?: NodeJS.Signals;
};

/** `nats-server -js` on one address with its JetStream store in `storeDir`. */
export function natsServer(options: NatsServerOptions): ServerProcess {
  const args = ["-a", options.host, "-p", String(options.port), "-js", "-sd", options.storeDir];
  if (options.logFile) args.push("-l", options.logFile);
  return serverProcess({
    name: "nats-server",
    binary: options.binary ?? natsServerBinary(),
    args: [...args, ...(options.args ?? [])],
    host: options.host,
    port: options.port,
    ...(options.logFile ? { logFile: options.logFile } : {}),
    ...(options.detached !== undefined ? { detached: options.detached } : {}),
    ...(options.stopSignal ? { stopSignal: options.stopSignal } : {}),
  });
}

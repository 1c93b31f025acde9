import { mkdirSync } from "node:fs";
import { userInfo } from "node:os";
import { join, relative, resolve } from "node:path";
import { type Env, findServerBinaries, type ServerBinaries, type ServerKind } from "./binaries.js";
import { natsServer } from "./nats.js";
import { postgresCluster, postgresDataDir } from "./postgres.js";
import { answers, bindAddress, isLoopback, unbracketed } from "./reachability.js";
import { redisServer } from "./redis.js";

export type EnsureServersOptions = {
  databaseUrl: string;
  redisUrl: string;
  natsUrl: string;
  /** Where private servers keep their data: `postgres/`, `redis/` and `nats/` in it. */
  varDir: string;
  /** Where the server programs are looked for (PATH, POSTGRES_BIN_DIR, …); default: process.env. */
  env?: Env;
  /** Says what is started and stopped (default: nothing is said). */
  log?: (line: string) => void;
};

/** The private servers ensureServers started; the ones that already answered are not in it. */
export type LocalServers = {
  started: Array<{ kind: ServerKind; setting: string; address: string; dataDir: string }>;
  /** Stops the private servers (each gracefully, so that its data is whole), in reverse order. */
  stop(): Promise<void>;
};

/** A configured server that cannot be had: the message is one line saying why and what to do. */
export class UnreachableServerError extends Error {
  override name = "UnreachableServerError";
}

type Wanted = { kind: ServerKind; setting: string; url: string; defaultPort: number };

type Target = Wanted & { host: string; port: number };

const NAMES: Record<ServerKind, string> = { postgres: "PostgreSQL", redis: "Redis", nats: "NATS" };

/** The host and port a URL names; undefined for what is not reached over TCP (a Unix socket). */
function addressOf(wanted: Wanted): { host: string; port: number } | undefined {
  // A Sentinel set or a Cluster (kit's parseRedisUrl) is never started here: it is several servers.
  if (wanted.kind === "redis" && /^rediss?\+(sentinel|cluster):/.test(wanted.url)) return undefined;
  let url: URL;
  try {
    // NATS takes several servers, comma-separated: the first says where a private one would go.
    url = new URL(wanted.kind === "nats" ? (wanted.url.split(",")[0] ?? "").trim() : wanted.url);
  } catch {
    throw new UnreachableServerError(`${wanted.setting} is not a URL: ${wanted.url}`);
  }
  if (wanted.kind === "postgres" && url.searchParams.get("host")?.startsWith("/")) return undefined;
  // Postgres URLs may leave the host out (libpq's default: localhost).
  return { host: url.hostname || "localhost", port: url.port ? Number(url.port) : wanted.defaultPort };
}

/** The role a Postgres URL connects as: its user name, else PGUSER, else the OS user's (as kit's withDefaultUser). */
function postgresRole(databaseUrl: string, env: Env): string {
  const user = decodeURIComponent(new URL(databaseUrl).username);
  if (user) return user;
  if (env.PGUSER) return env.PGUSER;
  try {
    return userInfo().username;
  } catch {
    // A uid with no passwd entry (some containers) has no name.
    return "postgres";
  }
}

/** Starts one private server on the target's address with its data in `dataDir`; resolves to what stops it. */
async function startPrivateServer(
  target: Target,
  dataDir: string,
  binaries: ServerBinaries,
  env: Env,
): Promise<() => Promise<void>> {
  mkdirSync(dataDir, { recursive: true });
  const host = bindAddress(target.host);
  const logFile = join(dataDir, "server.log");
  if (target.kind === "postgres") {
    const cluster = postgresCluster({
      dir: dataDir,
      host,
      port: target.port,
      superuser: postgresRole(target.url, env),
      ...(binaries.postgres ? { binDir: binaries.postgres } : {}),
    });
    if (!cluster.exists()) await cluster.init();
    await cluster.start();
    return () => cluster.stop("fast");
  }
  const server =
    target.kind === "redis"
      ? redisServer({ host, port: target.port, dataDir, logFile, detached: true, binary: binaries.redis })
      : natsServer({
          host,
          port: target.port,
          storeDir: dataDir,
          logFile,
          detached: true,
          binary: binaries.nats,
        });
  await server.start();
  // SIGTERM: Redis writes its append-only file out, NATS its JetStream store.
  return () => server.stop("SIGTERM");
}

/**
 * Makes sure PostgreSQL, Redis and NATS answer where the URLs say. A server that answers is used
 * as it is. Where nothing answers on a loopback address (127.0.0.0/8, ::1, localhost), a private
 * server of the project's own is started on exactly that host and port, its data under `varDir`
 * and kept between runs: a PostgreSQL cluster (trust authentication, a superuser for the role the
 * URL connects as; the database itself is the migrations' to create), Redis with an append-only
 * file (the gateway's idempotency records and rate-limit windows outlive a restart, as the rest of
 * the data does) and NATS with JetStream. Nothing is started on another machine's address: that
 * is an UnreachableServerError, as is a missing server program (a ServerNotInstalledError saying
 * what to install).
 */
export async function ensureServers(options: EnsureServersOptions): Promise<LocalServers> {
  const env = options.env ?? process.env;
  const log = options.log ?? (() => {});
  const wanted: Wanted[] = [
    { kind: "postgres", setting: "DATABASE_URL", url: options.databaseUrl, defaultPort: 5432 },
    { kind: "redis", setting: "REDIS_URL", url: options.redisUrl, defaultPort: 6379 },
    { kind: "nats", setting: "NATS_URL", url: options.natsUrl, defaultPort: 4222 },
  ];
  const targets: Target[] = [];
  for (const server of wanted) {
    const address = addressOf(server);
    if (address) targets.push({ ...server, ...address });
  }
  const silent = await Promise.all(targets.map(async (target) => !(await answers(target.host, target.port))));
  const missing = targets.filter((_, i) => silent[i]);
  const remote = missing.find((target) => !isLoopback(target.host));
  if (remote) {
    throw new UnreachableServerError(
      `nothing answers at ${remote.setting} (${remote.host}:${remote.port}) and it is not on this machine: start that ${NAMES[remote.kind]} server or set ${remote.setting} to one that runs`,
    );
  }
  const binaries = findServerBinaries(
    missing.map((target) => target.kind),
    env,
  );

  const varDir = resolve(options.varDir);
  const stops: Array<() => Promise<void>> = [];
  const started: LocalServers["started"] = [];
  const stop = async () => {
    for (const stopOne of stops.splice(0).reverse()) await stopOne();
  };
  try {
    for (const target of missing) {
      const preferred = join(varDir, target.kind);
      const { dir: dataDir, moved } =
        target.kind === "postgres" ? postgresDataDir(preferred) : { dir: preferred, moved: false };
      const address = `${unbracketed(target.host)}:${target.port}`;
      const shownDir = relative(process.cwd(), dataDir);
      const why = moved ? `: the postgres user it runs as cannot reach ${varDir}` : "";
      log(
        `${target.setting}: nothing answers at ${address}; starting a private ${NAMES[target.kind]} there (data in ${shownDir.startsWith("..") ? dataDir : shownDir}${why})`,
      );
      stops.push(await startPrivateServer(target, dataDir, binaries, env));
      started.push({ kind: target.kind, setting: target.setting, address, dataDir });
    }
  } catch (error) {
    await stop().catch(() => {});
    throw error;
  }
  return {
    started,
    async stop() {
      if (started.length > 0)
        log(`stopping the private ${started.map((server) => NAMES[server.kind]).join(", ")}`);
      await stop();
    },
  };
}

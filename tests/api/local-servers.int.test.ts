// What `npm start` and `npm test` do where nothing answers at the configured addresses: private
// PostgreSQL, Redis and NATS servers on exactly those loopback addresses, with their data kept
// between runs, stopped at the end; and one line saying what to install when a program is missing.
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { withDefaultUser } from "@evalp/kit";
import { ensureServers, ServerNotInstalledError, UnreachableServerError } from "@evalp/local-servers";
import { answers, freePort } from "@evalp/testing";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { Redis } from "ioredis";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";

const dirs: string[] = [];
const tempDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  // As a repository's var/ is: as root, Postgres runs as the postgres user, who must get through.
  chmodSync(dir, 0o755);
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function unusedAddresses() {
  const [postgres, redis, nats] = [await freePort(), await freePort(), await freePort()];
  return {
    ports: [postgres, redis, nats],
    databaseUrl: `postgres://127.0.0.1:${postgres}/x`,
    redisUrl: `redis://127.0.0.1:${redis}`,
    natsUrl: `nats://127.0.0.1:${nats}`,
  };
}

async function query(databaseUrl: string, sql: string): Promise<unknown[]> {
  // The database in the URL is the migrations' to create: a fresh cluster has `postgres`. The
  // user name is the OS user's, as the platform's processes fill it in.
  const url = new URL(withDefaultUser(databaseUrl));
  url.pathname = "/postgres";
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

describe("ensureServers", () => {
  it("starts private servers where nothing answers on loopback, keeps their data between runs, and stops them", async () => {
    const { ports, ...urls } = await unusedAddresses();
    const varDir = tempDir("evalp-var-");

    const first = await ensureServers({ ...urls, varDir });
    try {
      expect(first.started.map((server) => [server.kind, server.address])).toEqual([
        ["postgres", `127.0.0.1:${ports[0]}`],
        ["redis", `127.0.0.1:${ports[1]}`],
        ["nats", `127.0.0.1:${ports[2]}`],
      ]);
      // A URL without a user name connects as the OS user, a superuser of the cluster.
      expect(await query(urls.databaseUrl, "select 1 as one")).toEqual([{ one: 1 }]);
      expect(
        await query(urls.databaseUrl, "select rolsuper from pg_roles where rolname = current_user"),
      ).toEqual([{ rolsuper: true }]);
      await query(
        urls.databaseUrl,
        "create table kept (value text); insert into kept values ('from the first run')",
      );

      const redis = new Redis(urls.redisUrl, { lazyConnect: true });
      await redis.connect();
      expect(await redis.ping()).toBe("PONG");
      await redis.set("kept", "from the first run");
      redis.disconnect();

      const nc = await connect({ servers: urls.natsUrl });
      const jsm = await jetstreamManager(nc);
      const account = await jsm.getAccountInfo();
      expect(account.streams).toBe(0);
      await jsm.streams.add({ name: "KEPT", subjects: ["kept.>"] });
      await nc.close();

      // Servers that answer are used as they are: nothing more is started.
      const again = await ensureServers({ ...urls, varDir });
      expect(again.started).toEqual([]);
      await again.stop();
      expect(await Promise.all(ports.map((port) => answers(port)))).toEqual([true, true, true]);
    } finally {
      await first.stop();
    }
    expect(await Promise.all(ports.map((port) => answers(port)))).toEqual([false, false, false]);

    // The next run finds the same data under the same directory.
    const second = await ensureServers({ ...urls, varDir });
    try {
      expect(second.started).toHaveLength(3);
      expect(await query(urls.databaseUrl, "select value from kept")).toEqual([
        { value: "from the first run" },
      ]);
      const redis = new Redis(urls.redisUrl, { lazyConnect: true });
      await redis.connect();
      expect(await redis.get("kept")).toBe("from the first run");
      redis.disconnect();
      const nc = await connect({ servers: urls.natsUrl });
      expect((await (await jetstreamManager(nc)).getAccountInfo()).streams).toBe(1);
      await nc.close();
    } finally {
      await second.stop();
    }
    expect(await Promise.all(ports.map((port) => answers(port)))).toEqual([false, false, false]);
  });

  it("puts the PostgreSQL cluster where its server can reach it when the checkout is closed to others, and says where", async () => {
    const { ports, ...urls } = await unusedAddresses();
    // A `mktemp -d` folder, or a checkout in root's home: no one else may enter it.
    const closed = tempDir("evalp-closed-");
    chmodSync(closed, 0o700);
    const varDir = join(closed, "var");
    const said: string[] = [];
    const servers = await ensureServers({ ...urls, varDir, log: (line) => said.push(line) });
    const postgres = servers.started.find((server) => server.kind === "postgres");
    try {
      expect(await query(urls.databaseUrl, "select 1 as one")).toEqual([{ one: 1 }]);
      if (process.getuid?.() === 0) {
        // As root the server runs as the postgres user, who cannot get into the folder.
        expect(postgres?.dataDir.startsWith(closed)).toBe(false);
        expect(said.find((line) => line.startsWith("DATABASE_URL:"))).toContain(
          `data in ${postgres?.dataDir}: the postgres user it runs as cannot reach ${varDir}`,
        );
      } else {
        // Otherwise the server runs as this user, who can.
        expect(postgres?.dataDir).toBe(join(varDir, "postgres"));
      }
    } finally {
      await servers.stop();
      if (postgres && !postgres.dataDir.startsWith(closed))
        rmSync(dirname(postgres.dataDir), { recursive: true, force: true });
    }
    expect(await Promise.all(ports.map((port) => answers(port)))).toEqual([false, false, false]);
  });

  it("says in one line what to install when a server program is missing, and starts nothing", async () => {
    const { ports, ...urls } = await unusedAddresses();
    const empty = tempDir("evalp-nothing-");
    const env = { PATH: empty, POSTGRES_BIN_DIR: empty, NATS_SERVER_BIN: join(empty, "nats-server") };

    const all = ensureServers({ ...urls, varDir: tempDir("evalp-var-"), env });
    await expect(all).rejects.toThrow(ServerNotInstalledError);
    await expect(all).rejects.toThrow(
      /^PostgreSQL server, Redis server and NATS server not found: install them \(Debian: sudo apt-get install postgresql redis-server nats-server\)$/,
    );

    // Only Postgres missing (the others found as usual).
    const postgres = ensureServers({
      ...urls,
      varDir: tempDir("evalp-var-"),
      env: { ...process.env, POSTGRES_BIN_DIR: empty },
    });
    await expect(postgres).rejects.toThrow(
      /^PostgreSQL server not found: install it \(Debian: sudo apt-get install postgresql\)$/,
    );
    expect(await Promise.all(ports.map((port) => answers(port)))).toEqual([false, false, false]);
  });

  it("starts nothing for an address on another machine, and says which setting to fix", async () => {
    const { ports, ...urls } = await unusedAddresses();
    const result = ensureServers({
      ...urls,
      redisUrl: "redis://redis.evalp.invalid:6379",
      varDir: tempDir("evalp-var-"),
    });
    await expect(result).rejects.toThrow(UnreachableServerError);
    await expect(result).rejects.toThrow(
      "nothing answers at REDIS_URL (redis.evalp.invalid:6379) and it is not on this machine: start that Redis server or set REDIS_URL to one that runs",
    );
    expect(await Promise.all(ports.map((port) => answers(port)))).toEqual([false, false, false]);
  });
});

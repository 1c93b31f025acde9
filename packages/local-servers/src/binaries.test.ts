import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  findServerBinaries,
  installInstruction,
  natsServerBinary,
  postgresBinDir,
  redisServerBinary,
  ServerNotInstalledError,
} from "./binaries.js";

const root = mkdtempSync(join(tmpdir(), "evalp-binaries-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A directory holding empty executables of these names. */
function dirWith(name: string, programs: string[]): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  for (const program of programs) {
    writeFileSync(join(dir, program), "#!/bin/sh\nexit 0\n");
    chmodSync(join(dir, program), 0o755);
  }
  return dir;
}

describe("installInstruction", () => {
  it("names the server and its Debian package in one line", () => {
    expect(installInstruction(["postgres"])).toBe(
      "PostgreSQL server not found: install it (Debian: sudo apt-get install postgresql)",
    );
    expect(installInstruction(["redis", "nats"])).toBe(
      "Redis server and NATS server not found: install them (Debian: sudo apt-get install redis-server nats-server)",
    );
  });
});

describe("finding the server programs", () => {
  const empty = dirWith("empty", []);

  it("uses POSTGRES_BIN_DIR when it holds initdb, pg_ctl and postgres, and only it when set", () => {
    const bin = dirWith("pg", ["initdb", "pg_ctl", "postgres"]);
    expect(postgresBinDir({ PATH: empty, POSTGRES_BIN_DIR: bin })).toBe(bin);
    const partial = dirWith("pg-client-only", ["pg_ctl"]);
    expect(() => postgresBinDir({ PATH: bin, POSTGRES_BIN_DIR: partial })).toThrow(ServerNotInstalledError);
  });

  it("finds initdb's directory through PATH", () => {
    const bin = dirWith("pg-on-path", ["initdb", "pg_ctl", "postgres"]);
    expect(postgresBinDir({ PATH: `${empty}:${bin}` })).toBe(bin);
  });

  it("finds redis-server on PATH, or the one REDIS_SERVER_BIN and NATS_SERVER_BIN name", () => {
    const bin = dirWith("servers", ["redis-server", "nats-server"]);
    expect(redisServerBinary({ PATH: bin })).toBe(join(bin, "redis-server"));
    expect(natsServerBinary({ PATH: bin })).toBe(join(bin, "nats-server"));
    expect(redisServerBinary({ PATH: empty, REDIS_SERVER_BIN: join(bin, "redis-server") })).toBe(
      join(bin, "redis-server"),
    );
    expect(() => redisServerBinary({ PATH: bin, REDIS_SERVER_BIN: join(empty, "redis-server") })).toThrow(
      ServerNotInstalledError,
    );
    expect(() => natsServerBinary({ PATH: bin, NATS_SERVER_BIN: join(empty, "nats-server") })).toThrow(
      ServerNotInstalledError,
    );
  });

  it("names every missing server in the one line", () => {
    const bin = dirWith("only-redis", ["redis-server"]);
    const env = { PATH: bin, POSTGRES_BIN_DIR: empty, NATS_SERVER_BIN: join(empty, "nats-server") };
    expect(findServerBinaries(["redis"], env)).toEqual({ redis: join(bin, "redis-server") });
    expect(() => findServerBinaries(["postgres", "redis", "nats"], env)).toThrow(
      "PostgreSQL server and NATS server not found: install them (Debian: sudo apt-get install postgresql nats-server)",
    );
  });
});

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./config.js";
import { parseRedisUrl } from "./redis-url.js";

describe("parseRedisUrl", () => {
  it("leaves a single server's URL to ioredis", () => {
    expect(parseRedisUrl("rediss://user:secret@redis.example.net:6380/2")).toEqual({
      kind: "standalone",
      url: "rediss://user:secret@redis.example.net:6380/2",
    });
  });

  it("reads a Sentinel set: its sentinels, the primary's name, the database and the credentials", () => {
    expect(
      parseRedisUrl("redis+sentinel://:p%40ss@10.0.0.1:26379,[::1]:26380,sentinel-2:26379/mymaster/3"),
    ).toEqual({
      kind: "sentinel",
      sentinels: [
        { host: "10.0.0.1", port: 26379 },
        { host: "::1", port: 26380 },
        { host: "sentinel-2", port: 26379 },
      ],
      name: "mymaster",
      db: 3,
      password: "p@ss",
      tls: false,
    });
    expect(parseRedisUrl("rediss+sentinel://a:1/primary")).toMatchObject({
      kind: "sentinel",
      db: 0,
      tls: true,
    });
  });

  it("reads a Cluster's seed nodes", () => {
    expect(parseRedisUrl("redis+cluster://evalp:pw@n1:7000,n2:7001")).toEqual({
      kind: "cluster",
      nodes: [
        { host: "n1", port: 7000 },
        { host: "n2", port: 7001 },
      ],
      username: "evalp",
      password: "pw",
      tls: false,
    });
  });

  it.each([
    ["http://127.0.0.1:6379", /redis:\/\//],
    ["redis+sentinel://a:1,b:2", /primary name/],
    ["redis+sentinel://a:1/m/x", /database/],
    ["redis+sentinel://a/m", /host:port/],
    ["redis+cluster://a:1,b:99999", /host:port/],
    ["redis+cluster://a:1/0", /no path/],
  ])("refuses %s", (url, reason) => {
    expect(() => parseRedisUrl(url)).toThrow(reason);
  });

  it("is how the configuration checks REDIS_URL", () => {
    const VAR_DIR = mkdtempSync(join(tmpdir(), "evalp-config-"));
    expect(() => loadConfig({ VAR_DIR, REDIS_URL: "redis+sentinel://a:1" })).toThrow(ConfigError);
    expect(loadConfig({ VAR_DIR, REDIS_URL: "redis+cluster://a:1" }).REDIS_URL).toBe("redis+cluster://a:1");
  });
});

/** A host and port of a Redis node or sentinel. */
export type RedisNode = { host: string; port: number };

/** Credentials and transport shared by every connection to a Redis deployment. */
export type RedisAuth = { username?: string; password?: string; tls: boolean };

/**
 * What `REDIS_URL` names (docs/configuration.md):
 * - `redis://…` / `rediss://…`: one server (as ioredis reads the URL);
 * - `redis+sentinel://[user:password@]host:port,host:port/<primary name>[/<db>]`: the primary
 *   the sentinels name, followed through failovers (the credentials are the data nodes' and the
 *   sentinels' alike);
 * - `redis+cluster://[user:password@]host:port,host:port`: a Redis Cluster, these nodes the
 *   first asked for its slots.
 * `rediss+sentinel` and `rediss+cluster` connect with TLS.
 */
export type RedisTarget =
  | { kind: "standalone"; url: string }
  | ({ kind: "sentinel"; sentinels: RedisNode[]; name: string; db: number } & RedisAuth)
  | ({ kind: "cluster"; nodes: RedisNode[] } & RedisAuth);

const SCHEME = /^(rediss?)(?:\+(sentinel|cluster))?:\/\/(.*)$/;

/** Reads a `REDIS_URL`; throws an Error saying what is wrong with one it cannot read. */
export function parseRedisUrl(value: string): RedisTarget {
  const match = SCHEME.exec(value.trim());
  if (!match) throw new Error("expected redis://, rediss://, redis+sentinel:// or redis+cluster://");
  const [, scheme, mode, rest = ""] = match;
  if (!mode) {
    // Read by ioredis itself; only checked to be a URL here.
    new URL(value);
    return { kind: "standalone", url: value.trim() };
  }
  const at = rest.lastIndexOf("@", rest.indexOf("/") === -1 ? rest.length : rest.indexOf("/"));
  const userinfo = at === -1 ? "" : rest.slice(0, at);
  const afterUser = at === -1 ? rest : rest.slice(at + 1);
  const slash = afterUser.indexOf("/");
  const hosts = slash === -1 ? afterUser : afterUser.slice(0, slash);
  const path = (slash === -1 ? "" : afterUser.slice(slash + 1)).split("?")[0] ?? "";
  const nodes = hosts.split(",").map(parseNode);
  if (nodes.length === 0) throw new Error("expected at least one host:port");
  const auth: RedisAuth = { tls: scheme === "rediss", ...credentials(userinfo) };
  if (mode === "cluster") {
    if (path !== "") throw new Error("a cluster URL has no path (a cluster has no primary name or database)");
    return { kind: "cluster", nodes, ...auth };
  }
  const [name = "", db = "0", ...extra] = path.split("/");
  if (name === "" || extra.length > 0) throw new Error("expected /<primary name>[/<db>] after the sentinels");
  if (!/^\d+$/.test(db)) throw new Error(`database must be a number, got ${db}`);
  return { kind: "sentinel", sentinels: nodes, name: decodeURIComponent(name), db: Number(db), ...auth };
}

function parseNode(text: string): RedisNode {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):(\d{1,5})$/.exec(text.trim());
  const port = Number(match?.[2]);
  if (!match?.[1] || port < 1 || port > 65535) throw new Error(`expected host:port, got "${text}"`);
  return { host: match[1].replace(/^\[(.*)\]$/, "$1"), port };
}

function credentials(userinfo: string): { username?: string; password?: string } {
  if (userinfo === "") return {};
  const colon = userinfo.indexOf(":");
  const username = decodeURIComponent(colon === -1 ? userinfo : userinfo.slice(0, colon));
  const password = colon === -1 ? undefined : decodeURIComponent(userinfo.slice(colon + 1));
  return {
    ...(username ? { username } : {}),
    ...(password !== undefined ? { password } : {}),
  };
}

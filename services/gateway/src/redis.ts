import type { Socket } from "node:net";
import { parseRedisUrl } from "@evalp/kit";
import {
  Cluster,
  Redis,
  type RedisOptions,
  type SentinelConnectionOptions,
  SentinelConnector,
} from "ioredis";

/** The gateway's Redis: one server or a Sentinel set's primary (`Redis`), or a Cluster. */
export type RedisClient = Redis | Cluster;

/** Reconnect attempts every 50 ms more, at most 2 s apart, without jitter (see createRedis). */
const reconnectDelay = (attempt: number) => Math.min(attempt * 50, 2_000);

/**
 * After a failover the old primary, if it comes back, is a replica: a write sent to it answers
 * READONLY. The connection is then made anew, to whatever the sentinels (or the URL) name now.
 */
const reconnectOnError = (error: Error) => error.message.startsWith("READONLY");

/**
 * ioredis's connector to a Sentinel set's primary, with one change: the failover detector of a
 * connection that has ended is taken down before the next connection is sought. Left up (as
 * ioredis leaves it until the next connection is made), a `+switch-master` it hears while the
 * sentinels are being asked for the new primary disconnects the connector in the middle of that
 * attempt; the attempt then fails with "Connection is closed" and ioredis ends the client for good
 * (status `end`, no reconnection), and the gateway answered 503 to every keyed write until it was
 * restarted. When the primary dies the client keeps seeking a connection while the sentinels
 * agree on a new one, so their announcement can land during one of its questions to them (a few
 * ms each, longer on a busy machine). The detector of the new connection is set up as soon as it
 * connects, as before.
 */
class SentinelConnectorOfOneConnection extends SentinelConnector {
  // ioredis constructs a `Connector` with its client's options, the sentinel options among them.
  constructor(options: unknown) {
    super(options as SentinelConnectionOptions);
  }

  override connect(eventEmitter: Parameters<SentinelConnector["connect"]>[0]) {
    // A connection is sought only once the last one has closed: ending its stream again is a
    // no-op, and this connector's `disconnect` takes the detector down with it.
    this.disconnect();
    return super.connect(eventEmitter);
  }
}

/** Fail fast, per connection: see createRedis. */
const FAIL_FAST: RedisOptions = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 1,
  commandTimeout: 1_000,
  connectTimeout: 2_000,
  reconnectOnError,
};

/**
 * A Redis client that fails fast when Redis is down, so that a request needing Redis answers
 * 503 promptly instead of waiting: while the connection is down (Redis stopped, restarting,
 * unreachable, failing over) commands are refused at once rather than queued until the next
 * reconnection attempt, which took up to 1.5 s per command (and the rate limit and idempotency
 * each issue one); a command sent on a connection that stops answering gives up after 1 s. The
 * client keeps reconnecting in the background and serves again as soon as Redis answers.
 * Commands issued in the same turn of the event loop (the rate limit and idempotency of concurrent
 * requests) go out in one write per connection (`writeByTurn`).
 *
 * `url` (kit's parseRedisUrl) names one server, a Sentinel set (the primary it names, followed
 * through failovers: ioredis asks the sentinels again on every reconnection and watches their
 * `+switch-master`) or a Cluster (each node's connection batches its own writes).
 */
export function createRedis(url: string): RedisClient {
  const target = parseRedisUrl(url);
  // ioredis 6 backs off exponentially to 5 s, which kept a gateway refusing for up to 5 s after
  // Redis was back.
  const connection: RedisOptions = { ...FAIL_FAST, lazyConnect: false, retryStrategy: reconnectDelay };
  let client: RedisClient;
  if (target.kind === "cluster") {
    const { nodes, username, password, tls } = target;
    const cluster = new Cluster(nodes, {
      enableOfflineQueue: false,
      lazyConnect: false,
      // Writes go to the primaries only: a replica's copy may lag behind (idempotency records).
      scaleReads: "master",
      clusterRetryStrategy: reconnectDelay,
      // While a primary fails over, a command for its slots is tried again every 100 ms for at
      // most 1 s (maxRedirections × delay), then refused: the request answers 503, the client retries.
      retryDelayOnFailover: 100,
      retryDelayOnClusterDown: 100,
      retryDelayOnTryAgain: 100,
      maxRedirections: 10,
      slotsRefreshTimeout: 1_000,
      redisOptions: {
        ...FAIL_FAST,
        ...(username ? { username } : {}),
        ...(password !== undefined ? { password } : {}),
        ...(tls ? { tls: {} } : {}),
      },
    });
    // Each node's connection holds its writes by turn, as the one connection does elsewhere.
    cluster.on("+node", (node: Redis) => writeByTurn(node));
    client = cluster;
  } else if (target.kind === "sentinel") {
    const { sentinels, name, db, username, password, tls } = target;
    const redis = new Redis({
      ...connection,
      sentinels,
      name,
      db,
      ...(username ? { username, sentinelUsername: username } : {}),
      ...(password !== undefined ? { password, sentinelPassword: password } : {}),
      ...(tls ? { tls: {}, enableTLSForSentinelMode: true, sentinelTLS: {} } : {}),
      sentinelRetryStrategy: reconnectDelay,
      // A sentinel that takes a connection and answers nothing (stopped, or stuck writing its
      // configuration to a slow disk) is given up after 1 s for the next one: without a bound
      // the client waited on it for ever, connection or not. The failover detector's SUBSCRIBE
      // is bounded too; answered later, the subscription still takes effect (redis.test.ts).
      sentinelCommandTimeout: 1_000,
      // Told by the sentinels of a new primary, the client reconnects at once rather than when
      // its connection to the old one fails.
      failoverDetector: true,
      Connector: SentinelConnectorOfOneConnection,
    });
    writeByTurn(redis);
    client = redis;
  } else {
    const redis = new Redis(target.url, connection);
    writeByTurn(redis);
    client = redis;
  }
  // Connection errors surface on the commands that need Redis; the event itself is not fatal.
  client.on("error", () => {});
  return client;
}

/**
 * A channel every gateway hears, on a connection of its own (a subscribed connection takes no
 * other command) with the settings of `redis` but no command timeout: a subscription answered late
 * must still take effect. On a Cluster the channel is sharded (SSUBSCRIBE/SPUBLISH, Redis 7): it
 * lives on its slot's node, where the publisher and every subscriber meet, so that its publish
 * answers how many subscriptions it reached, as on one server. A plain PUBLISH reaches another
 * node's subscribers over the cluster bus, after it answered (tens of ms), and counts only the
 * node's own. (Reached is not read: a subscriber may not have read the message yet when the
 * publish answers, which is why the principal cache waits for acknowledgements.)
 *
 * `onLost` runs whenever the subscription may have missed a message (its connection ended, on a
 * Cluster the connection of any node), `onListening` once it is in place again.
 */
export type Broadcast = {
  /** Subscribes now and again after every loss; `onMessage` gets the channel's messages. */
  listen(handlers: { onMessage(text: string): void; onLost(): void; onListening(): void }): void;
  publish(text: string): Promise<unknown>;
  close(): void;
};

export function broadcastOf(
  redis: RedisClient,
  channel: string,
  onFailure: (error: unknown) => void,
): Broadcast {
  if (redis instanceof Cluster) {
    const subscriber = redis.duplicate(undefined, {
      lazyConnect: true,
      shardedSubscribers: true,
      redisOptions: { ...redis.options.redisOptions, commandTimeout: undefined },
    });
    let closed = false;
    let retry: NodeJS.Timeout | undefined;
    return {
      listen(handlers) {
        subscriber.on("error", () => {});
        subscriber.on("smessage", (from: string, text: string) => {
          if (from === channel) handlers.onMessage(text);
        });
        // Subscribing again is harmless where the subscription held; where its node's connection
        // ended it fails until the group has replaced the subscriber (at its next look at the
        // slots), and is tried again every second until it lands on the slot's node as it is now.
        const subscribe = () => {
          clearTimeout(retry);
          if (closed) return;
          subscriber.ssubscribe(channel).then(
            () => handlers.onListening(),
            (error: unknown) => {
              onFailure(error);
              if (!closed) retry = setTimeout(subscribe, 1_000);
            },
          );
        };
        // A node's connection ended (a sharded subscriber's among them): what it would have heard
        // is lost.
        const lost = () => {
          handlers.onLost();
          clearTimeout(retry);
          if (!closed) retry = setTimeout(subscribe, 1_000);
        };
        subscriber.on("-node", lost);
        subscriber.on("close", lost);
        subscriber.on("subscribersReady", subscribe);
        subscriber.on("ready", subscribe);
        subscriber.connect().catch(() => {});
      },
      publish: (text) => redis.spublish(channel, text),
      close: () => {
        closed = true;
        clearTimeout(retry);
        subscriber.disconnect();
      },
    };
  }
  const subscriber = redis.duplicate({ lazyConnect: true, commandTimeout: undefined });
  return {
    listen(handlers) {
      subscriber.on("error", () => {});
      subscriber.on("message", (from: string, text: string) => {
        if (from === channel) handlers.onMessage(text);
      });
      subscriber.on("close", () => handlers.onLost());
      subscriber.on("ready", () => {
        subscriber.subscribe(channel).then(() => handlers.onListening(), onFailure);
      });
      subscriber.connect().catch(() => {});
    },
    publish: (text) => redis.publish(channel, text),
    close: () => subscriber.disconnect(),
  };
}

/**
 * Holds the socket's writes from the first command of a turn of the event loop until the turn's
 * end (`cork` … `uncork` on `nextTick`), so that every command issued meanwhile leaves in one
 * write: a write per command was a large share of a replay's cost under load. ioredis's own
 * auto-pipelining batched the same way but built a pipeline, a promise and a callback per batch,
 * which cost a lone request (the common case below saturation) more than the write it saved.
 * A connection remade (a reconnection, a failover) is corked anew: the socket is read per command.
 */
export function writeByTurn(redis: Redis): void {
  const send = redis.sendCommand.bind(redis);
  let corked: Socket | null = null;
  const uncork = () => {
    corked?.uncork();
    corked = null;
  };
  redis.sendCommand = (command, stream) => {
    const socket = redis.stream as Socket | undefined;
    if (corked === null && socket && redis.status === "ready") {
      corked = socket;
      socket.cork();
      process.nextTick(uncork);
    }
    return send(command, stream);
  };
}

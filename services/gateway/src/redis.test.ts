import type { Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it, vi } from "vitest";
import { createRedis } from "./redis.js";
import { startDoorway, startFakeSentinel } from "./redis.test-support.js";

// Real Redis (the run's, as every test finds it): what is counted is the socket's writes to it.
const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
/** The port of the run's Redis, which the Sentinel tests' sentinels name as the primary. */
function redisPort(): number {
  const server = new URL(url);
  if (server.protocol !== "redis:") throw new Error("these tests need REDIS_URL to name one server");
  return Number(server.port || 6379);
}
const clients: Array<{ disconnect(): void }> = [];
afterAll(() => {
  for (const client of clients) client.disconnect();
});

/** Counts the writes `socket` hands to the operating system (one per `_write`/`_writev`). */
function countWrites(socket: Socket): { count: number } {
  const counted = { count: 0 };
  const write = socket._write.bind(socket);
  socket._write = (chunk, encoding, callback) => {
    counted.count += 1;
    write(chunk, encoding, callback);
  };
  const writev = socket._writev?.bind(socket);
  if (writev) {
    socket._writev = (chunks, callback) => {
      counted.count += 1;
      writev(chunks, callback);
    };
  }
  return counted;
}

async function ready(redis: Redis): Promise<Socket> {
  if (redis.status !== "ready") await new Promise((done) => redis.once("ready", done));
  const socket = redis.stream;
  if (!socket || !("cork" in socket)) throw new Error("no socket");
  return socket as Socket;
}

describe("createRedis on one server", () => {
  it("sends the commands of one turn of the event loop in one write, and the next turn's in another", async () => {
    const redis = createRedis(url);
    clients.push(redis);
    if (!(redis instanceof Redis)) throw new Error("a single server's URL makes a Redis, not a Cluster");
    const writes = countWrites(await ready(redis));
    const first = await Promise.all(Array.from({ length: 20 }, (_, i) => redis.echo(`turn-1-${i}`)));
    expect(first[19]).toBe("turn-1-19");
    expect(writes.count).toBe(1);
    await Promise.all(Array.from({ length: 5 }, (_, i) => redis.echo(`turn-2-${i}`)));
    expect(writes.count).toBe(2);
  });

  it("writes once per command without it: what the batching saves is real", async () => {
    const plain = new Redis(url);
    clients.push(plain);
    const writes = countWrites(await ready(plain));
    await Promise.all(Array.from({ length: 20 }, (_, i) => plain.echo(`plain-${i}`)));
    expect(writes.count).toBe(20);
  });
});

describe("createRedis on a Sentinel set", () => {
  it("connects to the new primary when the sentinels announce it while the client is asking them for it", async () => {
    // The old primary is a doorway to the run's Redis that the test closes; the new one the run's
    // Redis itself.
    const newPrimary = redisPort();
    const oldPrimary = await startDoorway({ host: "127.0.0.1", port: newPrimary });
    const sentinel = await startFakeSentinel("evalp", oldPrimary.port);
    const redis = createRedis(`redis+sentinel://127.0.0.1:${sentinel.port}/evalp`);
    clients.push(redis, { disconnect: () => void sentinel.close() });
    if (!(redis instanceof Redis)) throw new Error("a Sentinel set's URL makes a Redis, not a Cluster");
    await ready(redis);
    await vi.waitFor(() => expect(sentinel.subscribers(), "the failover detector subscribed").toBe(1));

    // The primary dies; the client seeks a connection again and asks the sentinel, which answers
    // late with the new primary and announces the switch before it does.
    sentinel.answerDelayMs = 500;
    sentinel.primaryPort = newPrimary;
    await oldPrimary.close();
    await vi.waitFor(() => expect(sentinel.unanswered, "the client asking for the primary").toBe(1), {
      timeout: 5_000,
      interval: 5,
    });
    sentinel.announceSwitch(oldPrimary.port, newPrimary);

    await vi.waitFor(() => expect(redis.status).toBe("ready"), { timeout: 5_000, interval: 20 });
    expect(await redis.echo("after the failover")).toBe("after the failover");
    expect(redis.stream?.remotePort).toBe(newPrimary);
  }, 15_000);
});

describe("createRedis on a Sentinel set with a sentinel that does not answer", () => {
  it("connects through the next sentinel when the first takes the connection and answers nothing", async () => {
    const hung = await startFakeSentinel("evalp", redisPort());
    hung.hung = true;
    const answering = await startFakeSentinel("evalp", redisPort());
    const redis = createRedis(`redis+sentinel://127.0.0.1:${hung.port},127.0.0.1:${answering.port}/evalp`);
    clients.push(
      redis,
      { disconnect: () => void hung.close() },
      { disconnect: () => void answering.close() },
    );
    if (!(redis instanceof Redis)) throw new Error("a Sentinel set's URL makes a Redis, not a Cluster");
    await vi.waitFor(() => expect(redis.status).toBe("ready"), { timeout: 5_000, interval: 20 });
    expect(await redis.echo("past a hung sentinel")).toBe("past a hung sentinel");
  }, 15_000);

  it("still hears of a failover when the sentinel confirmed the subscription later than the command timeout", async () => {
    const sentinel = await startFakeSentinel("evalp", redisPort());
    sentinel.subscribeDelayMs = 1_500;
    const redis = createRedis(`redis+sentinel://127.0.0.1:${sentinel.port}/evalp`);
    clients.push(redis, { disconnect: () => void sentinel.close() });
    if (!(redis instanceof Redis)) throw new Error("a Sentinel set's URL makes a Redis, not a Cluster");
    await ready(redis);
    await vi.waitFor(() => expect(sentinel.subscribers()).toBe(1));
    await sleep(sentinel.subscribeDelayMs + 200);
    // Told of a switch, the client drops its connection at once and asks again.
    const closed = new Promise((done) => redis.once("close", done));
    sentinel.announceSwitch(redisPort(), redisPort());
    await expect(Promise.race([closed.then(() => "reconnecting"), sleep(3_000, "not told")])).resolves.toBe(
      "reconnecting",
    );
    await vi.waitFor(() => expect(redis.status).toBe("ready"), { timeout: 5_000, interval: 20 });
  }, 15_000);
});

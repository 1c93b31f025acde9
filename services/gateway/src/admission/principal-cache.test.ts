import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createRedis } from "../redis.js";
import { type Doorway, startDoorway } from "../redis.test-support.js";
import { createPrincipalCache, type Principal, type PrincipalCache } from "./credentials.js";

// Real Redis (the run's, as every test finds it). One gateway's cache reaches it through a proxy
// that holds what Redis sends it for a while: a gateway that is busy, or descheduled, and reads
// the channel's message late.
const url = new URL(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
const LATE_MS = 300;
const closers: Array<() => unknown> = [];
let proxy: Doorway;

beforeAll(async () => {
  proxy = await startDoorway(
    { host: url.hostname, port: Number(url.port || 6379) },
    { replyDelayMs: LATE_MS },
  );
  closers.push(() => proxy.close());
});
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

const logger = pino({ level: "silent" });

/** The run's Redis as reached through the proxy: its credentials and database kept. */
function lateUrl(): string {
  const late = new URL(url);
  late.hostname = "127.0.0.1";
  late.port = String(proxy.port);
  return late.toString();
}

function principal(userId: string): Principal {
  return {
    kind: "session",
    principalId: randomUUID(),
    userId,
    email: null,
    apiKeyName: null,
    keyReach: null,
    roles: new Map(),
    activeOrganizationId: null,
    scopes: [],
    expiresAt: null,
  };
}

function cache(redisUrl: string, channel: string, heardWithinMs?: number): PrincipalCache {
  const redis = createRedis(redisUrl);
  const principals = createPrincipalCache({
    redis,
    channel,
    ttlMs: 60_000,
    logger,
    ...(heardWithinMs ? { heardWithinMs } : {}),
  });
  closers.push(async () => {
    await principals.close();
    redis.disconnect();
  });
  return principals;
}

/** Resolves `credential` through `principals` until the cache holds it (it caches only once subscribed). */
async function cached(principals: PrincipalCache, credential: string, resolved: Principal): Promise<void> {
  // Through the proxy, connecting and subscribing take several of its delays.
  await vi.waitFor(
    async () => {
      await principals.lookup(credential, async () => resolved);
      expect(principals.peek(credential)).toBe(resolved);
    },
    { timeout: 10_000, interval: 50 },
  );
}

// Each test connects through the proxy, whose delays add up to seconds on a loaded machine.
describe("the principal cache's invalidation", { timeout: 30_000 }, () => {
  it("answers a change only once a gateway that reads the channel late has forgotten it", async () => {
    const channel = `test:${randomUUID()}:principals:changed`;
    const near = cache(url.toString(), channel);
    const late = cache(lateUrl(), channel);
    const credential = `session-${randomUUID()}`;
    await cached(near, credential, principal("u1"));
    await cached(late, credential, principal("u1"));
    await near.forget({ credential });
    expect(near.peek(credential)).toBeUndefined();
    expect(late.peek(credential)).toBeUndefined();
  });

  it("forgets every principal of a user on every gateway before the answer, and keeps others'", async () => {
    const channel = `test:${randomUUID()}:principals:changed`;
    const near = cache(url.toString(), channel);
    const late = cache(lateUrl(), channel);
    const [touched, kept] = [randomUUID(), randomUUID()];
    const ofTouched = principal(touched);
    const ofKept = principal(kept);
    await cached(late, "credential-of-touched", ofTouched);
    await cached(late, "credential-of-kept", ofKept);
    await cached(near, "credential-of-touched", ofTouched);
    await near.forget({ userId: touched });
    expect(late.peek("credential-of-touched")).toBeUndefined();
    expect(near.peek("credential-of-touched")).toBeUndefined();
    expect(late.peek("credential-of-kept")).toBe(ofKept);
  });

  it("stops waiting for a subscriber that never acknowledges, and still forgets", async () => {
    const channel = `test:${randomUUID()}:principals:changed`;
    const mute = new Redis(url.toString());
    closers.push(() => mute.disconnect());
    await mute.subscribe(channel);
    const near = cache(url.toString(), channel, 200);
    const credential = `session-${randomUUID()}`;
    await cached(near, credential, principal("u2"));
    await near.forget({ credential });
    expect(near.peek(credential)).toBeUndefined();
  });

  it("forgets everything on a message it cannot read, and acknowledges only a well-formed change", async () => {
    const channel = `test:${randomUUID()}:principals:changed`;
    const near = cache(url.toString(), channel);
    const listener = new Redis(url.toString());
    const publisher = new Redis(url.toString());
    closers.push(
      () => listener.disconnect(),
      () => publisher.disconnect(),
    );
    const heard: string[] = [];
    listener.on("message", (_channel: string, text: string) => heard.push(text));
    await listener.subscribe(channel);
    const credential = `session-${randomUUID()}`;
    await cached(near, credential, principal("u3"));
    const unreadable = JSON.stringify({ heard: "not-an-id" });
    await publisher.publish(channel, unreadable);
    await vi.waitFor(() => expect(near.peek(credential)).toBeUndefined(), { timeout: 5_000 });
    await cached(near, credential, principal("u3"));
    const id = randomUUID();
    await publisher.publish(channel, JSON.stringify({ user_id: "someone-else", change_id: id }));
    await vi.waitFor(() => expect(heard).toContain(JSON.stringify({ heard: id })), { timeout: 5_000 });
    expect(near.peek(credential)).toBeDefined();
    // Messages are read in order: once the next change is acknowledged, one with a malformed id
    // would have been before it.
    await publisher.publish(channel, JSON.stringify({ user_id: "someone-else", change_id: "x" }));
    const next = randomUUID();
    await publisher.publish(channel, JSON.stringify({ user_id: "someone-else", change_id: next }));
    await vi.waitFor(() => expect(heard).toContain(JSON.stringify({ heard: next })), { timeout: 5_000 });
    const acknowledgements = heard.filter((text) => text.startsWith('{"heard"') && text !== unreadable);
    expect(acknowledgements).toEqual([JSON.stringify({ heard: id }), JSON.stringify({ heard: next })]);
  });
});

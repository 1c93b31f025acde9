import { randomUUID } from "node:crypto";
import { connectNats, createLogger, ensureStreams, type NatsConnection, type StreamRoute } from "@evalp/kit";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventBody } from "./event-body.js";
import { createLiveEvents, isEventTypeName } from "./live-events.js";

// Against the local JetStream, on a stream of this file's own.
const suffix = randomUUID().replaceAll("-", "").slice(0, 12).toUpperCase();
const route: StreamRoute = { stream: `LIVE_${suffix}`, root: "events", prefix: `live_${suffix}` };
const logger = createLogger("test", "silent");
let nc: NatsConnection;

beforeAll(async () => {
  nc = await connectNats({ NATS_URL: process.env.NATS_URL ?? "nats://127.0.0.1:4222" }, "live-test", logger);
  await ensureStreams(nc, [route]);
});
afterAll(async () => {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.delete(route.stream).catch(() => false);
  await nc?.drain();
});

const ENV = randomUUID();
const OTHER = randomUUID();

/** An event of `type` in `environment`, as an emitter writes it. */
function event(type: string, environment = ENV) {
  return {
    id: randomUUID(),
    type,
    timestamp: new Date().toISOString(),
    environment_id: environment,
    data: { n: 1 },
  };
}

/** The next `count` bodies (heartbeats included) the follower yields; the follower goes on. */
async function take(bodies: AsyncGenerator<string>, count: number): Promise<string[]> {
  const taken: string[] = [];
  while (taken.length < count) {
    const next = await bodies.next();
    if (next.done) break;
    taken.push(next.value);
  }
  return taken;
}

describe("createLiveEvents", () => {
  it("relays the environment's events published after it opened, and drops anything else", async () => {
    const js = jetstream(nc);
    const before = event("subject.imported");
    await js.publish(`${route.prefix}.${ENV}.subject.imported`, JSON.stringify(before));
    const live = createLiveEvents({ nats: () => nc, route, logger, heartbeatMs: 60_000 });
    const stop = new AbortController();
    const bodies = live.follow(ENV, [], stop.signal);
    // The first body is the heartbeat that says the stream is open.
    expect(await take(bodies, 1)).toEqual([""]);
    const good = event("webhook.test");
    const published = [
      // Another environment's event on this environment's subject; a type not its subject's; no JSON.
      [`${route.prefix}.${ENV}.webhook.test`, JSON.stringify(event("webhook.test", OTHER))],
      [`${route.prefix}.${ENV}.webhook.test`, JSON.stringify(event("subject.imported"))],
      [`${route.prefix}.${ENV}.webhook.test`, "{not json"],
      [`${route.prefix}.${ENV}.webhook.test`, JSON.stringify({ id: "x" })],
      [`${route.prefix}.${OTHER}.webhook.test`, JSON.stringify(event("webhook.test", OTHER))],
      [`${route.prefix}.${ENV}.webhook.test`, JSON.stringify(good)],
    ] as const;
    for (const [subject, body] of published) await js.publish(subject, body);
    expect(await take(bodies, 1)).toEqual([eventBody(good)]);
    stop.abort();
    expect(await bodies.next()).toEqual({ done: true, value: undefined });
  }, 30_000);

  it("keeps to the types asked for, beats while quiet, and ends every stream when closed", async () => {
    const js = jetstream(nc);
    const live = createLiveEvents({ nats: () => nc, route, logger, heartbeatMs: 300 });
    const bodies = live.follow(ENV, ["quota.updated", "webhook.test"], new AbortController().signal);
    expect(await take(bodies, 1)).toEqual([""]);
    const wanted = event("quota.updated");
    await js.publish(`${route.prefix}.${ENV}.subject.imported`, JSON.stringify(event("subject.imported")));
    await js.publish(`${route.prefix}.${ENV}.quota.updated`, JSON.stringify(wanted));
    expect(await take(bodies, 1)).toEqual([eventBody(wanted)]);
    // Nothing more is published: heartbeats come.
    expect(await take(bodies, 2)).toEqual(["", ""]);
    live.close();
    expect(await bodies.next()).toEqual({ done: true, value: undefined });
    await expect(live.follow(ENV, [], new AbortController().signal).next()).rejects.toMatchObject({
      code: "unavailable",
    });
  }, 30_000);

  it("takes event type names and nothing a subject filter would read as more", () => {
    expect(isEventTypeName("subject.imported")).toBe(true);
    expect(isEventTypeName("continuous_answer.recorded")).toBe(true);
    for (const bad of [
      "*",
      ">",
      "subject.*",
      "subject.>",
      "subject",
      "subject..x",
      "Subject.imported",
      "a.b c",
    ]) {
      expect(isEventTypeName(bad), bad).toBe(false);
    }
  });
});

import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { createEndpointSet, parseServiceAddress } from "./service-endpoints.js";

const none: never[] = [];

describe("parseServiceAddress", () => {
  it("reads one URL or a comma-separated list", () => {
    expect(parseServiceAddress("http://a:1").map(String)).toEqual(["http://a:1/"]);
    expect(parseServiceAddress(" http://a:1 , http://b:2/ ").map(String)).toEqual([
      "http://a:1/",
      "http://b:2/",
    ]);
    expect(() => parseServiceAddress(" , ")).toThrow();
  });
});

describe("createEndpointSet", () => {
  it("goes round robin over the listed replicas", async () => {
    const set = createEndpointSet("http://10.0.0.1:8081,http://10.0.0.2:8081", {
      create: (url) => url,
      refreshMs: 1,
    });
    const picked = [];
    for (let i = 0; i < 4; i++) picked.push(set.pick(none)?.url);
    expect(picked).toEqual([
      "http://10.0.0.1:8081",
      "http://10.0.0.2:8081",
      "http://10.0.0.1:8081",
      "http://10.0.0.2:8081",
    ]);
  });

  it("passes over a replica marked down until its mark ends, and never one already tried", async () => {
    let clock = 1_000;
    const set = createEndpointSet("http://10.0.0.1:8081,http://10.0.0.2:8081", {
      create: (url) => url,
      refreshMs: 1,
      now: () => clock,
    });
    const [first, second] = set.endpoints();
    set.markDown(first!);
    expect(set.pick(none)?.url).toBe(second!.url);
    expect(set.pick(none)?.url).toBe(second!.url);
    // Every untried replica down: the one whose mark ends first is still tried.
    expect(set.pick([second!])?.url).toBe(first!.url);
    expect(set.pick([first!, second!])).toBeUndefined();
    clock += 250;
    const picks = new Set([set.pick(none)?.url, set.pick(none)?.url]);
    expect(picks).toEqual(new Set([first!.url, second!.url]));
    // Each further failure in a row marks it down for longer; an answer clears it.
    set.markDown(first!);
    expect(first!.downUntil - clock).toBe(500);
    set.markDown(first!);
    expect(first!.downUntil - clock).toBe(1_000);
    set.markUp(first!);
    expect(first!.failures).toBe(0);
  });

  it("takes a host name's addresses as the replicas, looks them up again, and retires those gone", async () => {
    let clock = 0;
    let addresses = ["10.0.0.1", "10.0.0.2"];
    const retired: string[] = [];
    const created: string[] = [];
    const set = createEndpointSet("http://plane.example.svc:8081", {
      create: (url) => {
        created.push(url);
        return url;
      },
      retire: (client) => retired.push(client),
      refreshMs: 5_000,
      lookup: async () => addresses,
      now: () => clock,
    });
    // No replica known yet: the first lookup is waited for.
    expect(set.pick(none)).toBeUndefined();
    await set.refresh();
    expect(set.pick(none)?.url).toBe("http://10.0.0.1:8081");
    expect(set.endpoints().map((e) => e.url)).toEqual(["http://10.0.0.1:8081", "http://10.0.0.2:8081"]);
    addresses = ["10.0.0.2", "10.0.0.3", "fd00::4"];
    clock = 4_999;
    expect(set.refresh()).toBeUndefined();
    expect(set.endpoints()).toHaveLength(2);
    clock = 5_000;
    // Replicas are known: the new lookup runs beside the calls, and the next pick sees its answer.
    expect(set.refresh()).toBeUndefined();
    await sleep(0);
    expect(set.endpoints().map((e) => e.url)).toEqual([
      "http://10.0.0.2:8081",
      "http://10.0.0.3:8081",
      "http://[fd00::4]:8081",
    ]);
    expect(retired).toEqual(["http://10.0.0.1:8081"]);
    // A replica that stayed keeps its client (and its connection).
    expect(created.filter((url) => url === "http://10.0.0.2:8081")).toHaveLength(1);
  });

  it("keeps the replicas it knows while the name does not resolve", async () => {
    let clock = 0;
    let fail = false;
    const set = createEndpointSet("http://plane:1", {
      create: (url) => url,
      refreshMs: 10,
      lookup: async () => {
        if (fail) throw new Error("ENOTFOUND");
        return ["10.1.1.1"];
      },
      now: () => clock,
    });
    await set.refresh();
    fail = true;
    clock = 100;
    set.refresh();
    await sleep(0);
    expect(set.endpoints().map((e) => e.url)).toEqual(["http://10.1.1.1:1"]);
  });
});

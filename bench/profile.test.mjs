import { describe, expect, it } from "vitest";
import { placeOf, summarizeProfile } from "./profile.mjs";

const frame = (functionName, url, lineNumber = 0) => ({ functionName, url, lineNumber, columnNumber: 0 });

describe("summarizeProfile", () => {
  it("sums self time by place and by function, largest first, leaving idle time out", () => {
    const profile = {
      nodes: [
        { id: 1, callFrame: frame("(root)", "") },
        { id: 2, callFrame: frame("(idle)", "") },
        { id: 3, callFrame: frame("write", "node:internal/stream_base_commons", 9) },
        { id: 4, callFrame: frame("hit", "file:///x/services/gateway/dist/fixed-window.js", 20) },
        { id: 5, callFrame: frame("parse", "file:///x/node_modules/@fastify/ajv/lib/a.js", 4) },
      ],
      samples: [2, 3, 4, 3, 5, 2],
      timeDeltas: [500, 100, 40, 100, 60, 500],
    };
    const summary = summarizeProfile(profile);
    expect(summary.totalUs).toBe(300);
    expect(summary.byPlace).toEqual([
      ["node:internal", 200],
      ["pkg:@fastify/ajv", 60],
      ["services/gateway/fixed-window.js", 40],
    ]);
    expect(summary.byFunction[0]).toEqual(["write node:internal:10", 200]);
  });

  it("leaves out the samples taken before `afterUs`", () => {
    const profile = {
      nodes: [
        { id: 1, callFrame: frame("compile", "node:internal/vm", 1) },
        { id: 2, callFrame: frame("handle", "file:///x/services/gateway/dist/app.js", 1) },
      ],
      samples: [1, 1, 2],
      timeDeltas: [1000, 1000, 500],
    };
    expect(summarizeProfile(profile, { afterUs: 2500 }).byFunction).toEqual([
      ["handle services/gateway/app.js:2", 500],
    ]);
  });

  it("names a dependency by its package, scoped or not", () => {
    expect(placeOf("file:///a/node_modules/ioredis/built/Redis.js")).toBe("pkg:ioredis");
    expect(placeOf("file:///a/node_modules/@connectrpc/connect/dist/esm/x.js")).toBe(
      "pkg:@connectrpc/connect",
    );
    expect(placeOf("file:///a/packages/connect-h2/dist/connect-h2-transport.js")).toBe(
      "packages/connect-h2/connect-h2-transport.js",
    );
  });
});

import type http2 from "node:http2";
import { requestHeader } from "@connectrpc/connect/protocol-connect";
import { describe, expect, it } from "vitest";
import { unaryRequestHeader } from "./connect-h2-transport.js";
import { nodeHeaders } from "./h2-messages.js";
import { WireHeaders } from "./wire-headers.js";

/** What a Headers object shows a reader: every way of reading it. */
function reading(header: Headers, names: string[]) {
  return {
    entries: [...header],
    keys: [...header.keys()],
    values: [...header.values()],
    each: (() => {
      const seen: string[][] = [];
      header.forEach((value, name) => {
        seen.push([name, value]);
      });
      return seen;
    })(),
    got: names.map((name) => [header.get(name), header.has(name)]),
    cookies: header.getSetCookie(),
  };
}

/** Runs the same steps on the web's Headers and the hop's, and expects the same readings and errors. */
function same(steps: Array<(header: Headers) => void>, init?: ConstructorParameters<typeof Headers>[0]) {
  const web = new Headers(init);
  const wire = new WireHeaders(init);
  for (const step of steps) {
    let webError: unknown;
    let wireError: unknown;
    try {
      step(web);
    } catch (error) {
      webError = error;
    }
    try {
      step(wire);
    } catch (error) {
      wireError = error;
    }
    expect(wireError === undefined).toBe(webError === undefined);
    if (webError !== undefined) expect(wireError).toBeInstanceOf(TypeError);
  }
  const names = ["content-type", "Content-Type", "x-a", "set-cookie", "X-B", "authorization", "absent"];
  expect(reading(wire, names)).toEqual(reading(web, names));
}

describe("WireHeaders", () => {
  it("reads as the web's Headers after the same appends, sets and deletes", () => {
    same([
      (h) => h.set("Content-Type", "application/proto"),
      (h) => h.append("x-a", "1"),
      (h) => h.append("X-A", "2"),
      (h) => h.set("x-b", "  padded\t"),
      (h) => h.append("set-cookie", "a=1"),
      (h) => h.append("Set-Cookie", "b=2"),
      (h) => h.set("authorization", "Bearer x"),
      (h) => h.delete("Authorization"),
      (h) => h.set("x-a", "3"),
    ]);
  });

  it("is made from what the web's Headers is made from: a record, pairs, another Headers", () => {
    same([], { "X-Request-Id": "r1", "x-a": "1" });
    same(
      [],
      [
        ["x-a", "1"],
        ["x-a", "2"],
        ["set-cookie", "c=1"],
      ],
    );
    same([], new Headers({ "x-b": "b", "set-cookie": "d=1" }));
    same([(h) => h.append("x-a", "2")], new WireHeaders({ "x-a": "1" }));
  });

  it("refuses what the web's Headers refuses, with a TypeError, and keeps what it held", () => {
    same([
      (h) => h.set("x-a", "kept"),
      (h) => h.set("bad name", "v"),
      (h) => h.set("x-a", "line\nbreak"),
      (h) => h.append("x-a", "nul\0"),
      (h) => h.set("x-a", "é"),
      (h) => h.set("x-a", "€"),
      (h) => h.get("(bad)"),
      (h) => h.delete(""),
    ]);
    expect(() => new WireHeaders([["only-a-name"]] as unknown as [string, string][])).toThrow(TypeError);
  });

  it("hands its fields to Node's headers in one pass, trailers under their prefix, both kept on a clash", () => {
    const header = new WireHeaders({ "content-type": "application/proto", "trailer-x-t": "from-header" });
    header.append("set-cookie", "a=1");
    header.append("set-cookie", "b=2");
    const trailer = new WireHeaders({ "x-t": "from-trailer", "x-u": "u" });
    const head = nodeHeaders(trailer, nodeHeaders(header, { ":status": 200 }), "trailer-");
    expect(head).toEqual({
      ":status": 200,
      "content-type": "application/proto",
      "set-cookie": ["a=1", "b=2"],
      "trailer-x-t": "from-header, from-trailer",
      "trailer-x-u": "u",
    });
  });

  it("reads Node's incoming headers without their pseudo-headers, trailers apart", () => {
    const trailer = new WireHeaders();
    // Node hands a response's status over as a number among the headers.
    const incoming = { ":status": 200, "content-type": "application/proto", "trailer-x-t": "t" };
    const header = WireHeaders.fromNode(
      { ...(incoming as unknown as http2.IncomingHttpHeaders), "set-cookie": ["a=1", "b=2"] },
      trailer,
    );
    expect([...header]).toEqual([
      ["content-type", "application/proto"],
      ["set-cookie", "a=1"],
      ["set-cookie", "b=2"],
    ]);
    expect([...trailer]).toEqual([["x-t", "t"]]);
    // Trimmed as the web's Headers trims.
    expect(WireHeaders.fromNode({ "x-a": " padded\t" }).get("x-a")).toBe("padded");
  });

  it("makes a unary call's headers as connect's requestHeader does", () => {
    const cases: Array<[number | undefined, ConstructorParameters<typeof Headers>[0]]> = [
      [undefined, undefined],
      [5000, { "x-request-id": "r1", "X-Evalp-Actor-Kind": "api_key" }],
      [0, [["user-agent", "mine/1.0"]]],
      [250, new Headers({ "content-type": "text/plain", "connect-timeout-ms": "1" })],
    ];
    for (const [timeout, init] of cases) {
      expect([...unaryRequestHeader(timeout, init)]).toEqual([
        ...requestHeader("unary", true, timeout, init, true),
      ]);
    }
  });
});

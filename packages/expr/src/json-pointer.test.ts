import { describe, expect, it } from "vitest";
import { appendPointer, escapePointerToken, resolvePointer } from "./json-pointer.js";

describe("JSON pointers", () => {
  it("escapes ~ and / in tokens", () => {
    expect(escapePointerToken("a/b~c")).toBe("a~1b~0c");
    expect(appendPointer("", "axes", 0, "expr")).toBe("/axes/0/expr");
    expect(appendPointer("/x", "a/b")).toBe("/x/a~1b");
    expect(appendPointer("/x")).toBe("/x");
  });

  it("resolves what it appends", () => {
    const doc = { axes: [{ expr: { args: [1, { "a/b": "hit", "~": "tilde" }] } }] };
    expect(resolvePointer(doc, "")).toBe(doc);
    expect(resolvePointer(doc, "/axes/0/expr/args/0")).toBe(1);
    expect(resolvePointer(doc, appendPointer("/axes/0/expr/args/1", "a/b"))).toBe("hit");
    expect(resolvePointer(doc, "/axes/0/expr/args/1/~0")).toBe("tilde");
  });

  it("resolves nothing for pointers that name nothing", () => {
    const doc = { a: [1], s: "str" };
    expect(resolvePointer(doc, "a")).toBeUndefined();
    expect(resolvePointer(doc, "/b")).toBeUndefined();
    expect(resolvePointer(doc, "/a/1")).toBeUndefined();
    expect(resolvePointer(doc, "/a/01")).toBeUndefined();
    expect(resolvePointer(doc, "/a/-")).toBeUndefined();
    expect(resolvePointer(doc, "/s/length")).toBeUndefined();
    expect(resolvePointer(doc, "/toString")).toBeUndefined();
  });
});

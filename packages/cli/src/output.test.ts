import { describe, expect, it } from "vitest";
import { createOutput } from "./output.js";
import { fields } from "./table.js";

function capture(json: boolean) {
  const out: string[] = [];
  const err: string[] = [];
  const output = createOutput({ stdout: (text) => out.push(text), stderr: (text) => err.push(text) }, json);
  return { output, out, err };
}

type Key = { id: string; name: string; secret?: string };

describe("createOutput", () => {
  it("prints a list as one JSON array with --json", () => {
    const { output, out } = capture(true);
    output.list<Key>([{ id: "1", name: "a" }], fields<Key>("id"));
    expect(out).toHaveLength(1);
    expect(JSON.parse(out.join(""))).toEqual([{ id: "1", name: "a" }]);
  });

  it("prints an item's whole body with --json, and only the named fields as text", () => {
    const body: Key = { id: "1", name: "a", secret: "evk_s" };
    const asJson = capture(true);
    asJson.output.item(body, ["id"]);
    expect(JSON.parse(asJson.out.join(""))).toEqual(body);
    const asText = capture(false);
    asText.output.item(body, ["id", "name"]);
    expect(asText.out.join("")).toBe("id    1\nname  a\n");
  });

  it("writes notes to stderr, so stdout holds the result alone", () => {
    const { output, out, err } = capture(true);
    output.note("Logged out.");
    expect(out).toEqual([]);
    expect(err).toEqual(["Logged out.\n"]);
  });
});

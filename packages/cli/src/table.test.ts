import { describe, expect, it } from "vitest";
import { cell, fields, renderDetails, renderTable } from "./table.js";

type Row = { id: string; name: string | null; scopes: string[] };

describe("renderTable", () => {
  it("aligns columns two spaces apart under capitalised headers", () => {
    const rows: Row[] = [
      { id: "1", name: "backend", scopes: ["org:read", "audit:read"] },
      { id: "22", name: null, scopes: [] },
    ];
    expect(renderTable(rows, fields<Row>("id", "name", "scopes"))).toBe(
      ["ID  NAME     SCOPES", "1   backend  org:read,audit:read", "22  -        -"].join("\n"),
    );
  });

  it("prints the header alone for an empty list", () => {
    expect(renderTable([], fields<Row>("id", "name"))).toBe("ID  NAME");
  });

  it("keeps one line per row whatever a value holds", () => {
    const table = renderTable(
      [{ id: "1", name: "evil\nname\u001b[31m", scopes: [] }],
      fields<Row>("id", "name"),
    );
    expect(table.split("\n")).toHaveLength(2);
    expect(table).toContain("evil\\nname\\u001b[31m");
  });
});

describe("renderDetails", () => {
  it("aligns names and shows absent values as -", () => {
    expect(
      renderDetails([
        ["id", "k1"],
        ["revoked_at", null],
        ["scopes", ["a", "b"]],
      ]),
    ).toBe(["id          k1", "revoked_at  -", "scopes      a,b"].join("\n"));
  });
});

describe("cell", () => {
  it("renders each kind of JSON value on one line", () => {
    expect(cell(undefined)).toBe("-");
    expect(cell("")).toBe("-");
    expect(cell(0)).toBe("0");
    expect(cell(false)).toBe("false");
    expect(cell({ a: 1 })).toBe('{"a":1}');
  });
});

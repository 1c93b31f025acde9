import { describe, expect, it } from "vitest";
import { preparedStatement } from "./prepared-statements.js";

describe("preparedStatement", () => {
  it("names the statement and carries its values", () => {
    const byId = preparedStatement("test.by_id", "SELECT 1 WHERE $1::int = 1");
    expect(byId([1])).toEqual({ name: "test.by_id", text: "SELECT 1 WHERE $1::int = 1", values: [1] });
  });

  it("refuses a second text under a name, which a connection would run as the first", () => {
    preparedStatement("test.twice", "SELECT 1");
    expect(preparedStatement("test.twice", "SELECT 1")([])).toMatchObject({ text: "SELECT 1" });
    expect(() => preparedStatement("test.twice", "SELECT 2")).toThrow(/two texts/);
  });
});

import { describe, expect, it } from "vitest";
import { isUuid, newId } from "./ids.js";

describe("newId", () => {
  it("makes distinct version 7 uuids, across many draws of randomness", () => {
    const ids = Array.from({ length: 2_000 }, () => newId());
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) {
      expect(isUuid(id)).toBe(true);
      expect(id[14]).toBe("7");
      expect("89ab").toContain(id[19]);
    }
  });

  it("makes ids that sort in the order they were made, within one millisecond too", () => {
    const ids = Array.from({ length: 2_000 }, () => newId());
    expect([...ids].sort()).toEqual(ids);
    const started = Date.now();
    const ms = (id: string) => Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
    expect(ms(ids[0] ?? "")).toBeLessThanOrEqual(started);
    expect(Math.abs(ms(ids.at(-1) ?? "") - started)).toBeLessThan(1_000);
  });
});

import { describe, expect, it } from "vitest";
import { idList, intList, timeList } from "./array-literals.js";

describe("array literals", () => {
  it("joins ids as they are", () => {
    expect(idList(["0190a1b2-0000-7000-8000-000000000001", "0190a1b2-0000-7000-8000-000000000002"])).toBe(
      "{0190a1b2-0000-7000-8000-000000000001,0190a1b2-0000-7000-8000-000000000002}",
    );
    expect(idList([])).toBe("{}");
  });

  it("refuses what is not a uuid rather than let it split the array", () => {
    const id = "0190a1b2-0000-7000-8000-000000000001";
    expect(() => idList([`${id},${id}`])).toThrow(TypeError);
    expect(() => idList(["}"])).toThrow(TypeError);
  });

  it("writes a missing number as NULL, not as an empty or quoted element", () => {
    expect(intList([204, null, 0])).toBe("{204,NULL,0}");
  });

  it("writes times as UTC instants to the millisecond, whatever the process's time zone", () => {
    expect(timeList([new Date(Date.UTC(2026, 10, 27, 19, 0, 0, 7))])).toBe("{2026-11-27T19:00:00.007Z}");
  });
});

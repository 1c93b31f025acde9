import { InvalidArgumentError } from "commander";
import { describe, expect, it } from "vitest";
import { limitPair, pointInTime, positiveInteger, scopeList } from "./parse.js";

describe("positiveInteger", () => {
  it("takes 1 and up, nothing else", () => {
    expect(positiveInteger("1")).toBe(1);
    expect(positiveInteger("250")).toBe(250);
    for (const bad of ["0", "-1", "1.5", "ten", "", "01"])
      expect(() => positiveInteger(bad)).toThrow(InvalidArgumentError);
  });
});

describe("limitPair", () => {
  it("gathers repeated name=value pairs", () => {
    const first = limitPair("webhook_endpoints=50");
    expect(limitPair("programs=0", first)).toEqual({ webhook_endpoints: 50, programs: 0 });
  });

  it("refuses a malformed pair, a value out of range and a name given twice", () => {
    for (const bad of ["webhook_endpoints", "=5", "programs=-1", "programs=1.5", "programs=1000000001"])
      expect(() => limitPair(bad)).toThrow(InvalidArgumentError);
    expect(() => limitPair("programs=2", { programs: 1 })).toThrow(/twice/);
  });
});

describe("scopeList", () => {
  it("takes repeated and comma-separated scopes, each once, in order", () => {
    expect(scopeList("audit:read", scopeList("webhooks:read, org:read"))).toEqual([
      "webhooks:read",
      "org:read",
      "audit:read",
    ]);
    expect(scopeList("org:read", ["org:read"])).toEqual(["org:read"]);
    expect(() => scopeList(" , ")).toThrow(InvalidArgumentError);
  });
});

describe("pointInTime", () => {
  const now = () => new Date("2026-11-25T10:00:00.000Z");

  it("takes a span back from now", () => {
    expect(pointInTime("30m", now)).toBe("2026-11-25T09:30:00.000Z");
    expect(pointInTime("24h", now)).toBe("2026-11-24T10:00:00.000Z");
    expect(pointInTime("7d", now)).toBe("2026-11-18T10:00:00.000Z");
  });

  it("takes a date or date-time as RFC 3339 UTC", () => {
    expect(pointInTime("2026-11-20T08:00:00+01:00", now)).toBe("2026-11-20T07:00:00.000Z");
    expect(pointInTime("2026-11-20", now)).toBe("2026-11-20T00:00:00.000Z");
  });

  it("refuses anything else", () => {
    for (const bad of ["yesterday", "24", "2026-13-45", "5w"])
      expect(() => pointInTime(bad, now)).toThrow(InvalidArgumentError);
  });
});

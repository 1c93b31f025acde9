import { describe, expect, it } from "vitest";
import { dateParseError, emailSyntaxError, isNaiveDateTime, uuidParseError } from "./format-reasons.js";

// Expected texts are what Pydantic 2.13 (uuid crate, speedate) prints for the same inputs.
describe("uuidParseError", () => {
  it.each([
    ["xyz", "invalid character: found `x` at 1"],
    ["g2345678-1234-1234-1234-1234567890ab", "invalid character: found `g` at 1"],
    ["12345678-1234-1234-1234-1234567890aG", "invalid character: found `G` at 36"],
    ["urn:uuid:x", "invalid character: found `x` at 10"],
    ["1234", "invalid length: expected length 32 for simple format, found 4"],
    ["", "invalid length: expected length 32 for simple format, found 0"],
    ["12345678-1234-1234-1234", "invalid group count: expected 5, found 4"],
    ["12345678-123-1234-1234-1234567890ab", "invalid group length in group 1: expected 4, found 3"],
    ["12345678-1234-1234-1234-1234567890abc", "invalid group length in group 4: expected 12, found 13"],
    [
      "urn:uuid:12345678-1234-1234-1234-1234567890abc",
      "invalid group length in group 4: expected 12, found 22",
    ],
    ["{12345678-1234-1234-1234-1234567890abc}", "invalid group length in group 4: expected 12, found 15"],
    ["1234é", "invalid character: found `é` at 5"],
  ])("%j -> %s", (value, reason) => {
    expect(uuidParseError(value)).toBe(reason);
  });

  it("diagnoses the forms only the uuid crate accepts as not hyphenated", () => {
    expect(uuidParseError("123456781234123412341234567890ab")).toBe(
      "invalid group count: expected 5, found 1",
    );
    expect(uuidParseError("{12345678-1234-1234-1234-1234567890ab}")).toBe(
      "invalid character: found `{` at 1",
    );
  });
});

describe("dateParseError", () => {
  it.each([
    ["", "input is too short"],
    ["2024", "input is too short"],
    ["abcd-01-01", "invalid character in year"],
    ["2024/01/01", "invalid date separator, expected `-`"],
    ["2024-1-01T00:00:00Z", "invalid character in month"],
    ["2024-01-0x", "invalid character in day"],
    ["2024-13-01", "month value is outside expected range of 1-12"],
    ["2022-02-30", "day value is outside expected range"],
    ["2023-02-29", "day value is outside expected range"],
    ["2024-01-01T25:00:00Z", "unexpected extra characters at the end of the input"],
  ])("%j -> %s", (value, reason) => {
    expect(dateParseError(value)).toBe(reason);
  });

  it("accepts a date, leap days included", () => {
    expect(dateParseError("2024-02-29")).toBeNull();
    expect(dateParseError("2000-02-29")).toBeNull();
  });
});

describe("isNaiveDateTime", () => {
  it("recognises dates and date-times without an offset", () => {
    expect(isNaiveDateTime("2024-01-01")).toBe(true);
    expect(isNaiveDateTime("2024-01-01T10:00")).toBe(true);
    expect(isNaiveDateTime("2024-01-01 10:00:00.123456")).toBe(true);
  });

  it("rejects offsets, impossible dates and impossible times", () => {
    expect(isNaiveDateTime("2024-01-01T10:00:00Z")).toBe(false);
    expect(isNaiveDateTime("2024-02-30T10:00:00")).toBe(false);
    expect(isNaiveDateTime("2024-01-01T24:00:00")).toBe(false);
  });
});

describe("emailSyntaxError", () => {
  it.each([
    ["nope", "An email address must have an @-sign."],
    ["@example.com", "There must be something before the @-sign."],
    ["someone@", "There must be something after the @-sign."],
    ["a b@example.com", "The email address contains invalid characters before the @-sign: SPACE."],
    ["a(b)@example.com", "The email address contains invalid characters before the @-sign: '(', ')'."],
    [".a@example.com", "An email address cannot start with a period."],
    ["a.@example.com", "An email address cannot have a period immediately before the @-sign."],
    ["a..b@example.com", "An email address cannot have two periods in a row."],
    ["a@b@example.com", "The part after the @-sign contains invalid characters: '@'."],
    ["a@.example.com", "An email address cannot have a period immediately after the @-sign."],
    ["a@example.com.", "An email address cannot end with a period."],
    ["a@-example.com", "An email address cannot have a hyphen immediately after the @-sign."],
    ["a@example-.com", "An email address cannot have a period and a hyphen next to each other."],
    ["a@localhost", "The part after the @-sign is not valid. It should have a period."],
  ])("%j -> %s", (value, reason) => {
    expect(emailSyntaxError(value)).toBe(reason);
  });
});

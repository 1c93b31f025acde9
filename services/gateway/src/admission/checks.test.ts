import { describe, expect, it } from "vitest";
import { legacyKeyHeaders } from "./checks.js";

describe("legacyKeyHeaders", () => {
  const base = { PUBLIC_URL: "https://api.example.com", LEGACY_API_KEYS_SUNSET_AT: undefined };

  it("writes Deprecation as RFC 9745 does: @ and the Unix time, with a Link to the guide", () => {
    const headers = legacyKeyHeaders({
      ...base,
      LEGACY_API_KEYS_DEPRECATED_AT: new Date("2026-01-01T00:00:00Z"),
    });
    expect(headers).toEqual({
      deprecation: "@1767225600",
      link: '<https://api.example.com/docs/guides/authentication.md#legacy-keys>; rel="deprecation"; type="text/markdown"',
    });
  });

  it("announces a sunset as an HTTP date (RFC 8594) once one is set", () => {
    const headers = legacyKeyHeaders({
      ...base,
      LEGACY_API_KEYS_DEPRECATED_AT: new Date("2026-01-01T00:00:00Z"),
      LEGACY_API_KEYS_SUNSET_AT: new Date("2027-06-30T12:00:00Z"),
    });
    expect(headers.sunset).toBe("Wed, 30 Jun 2027 12:00:00 GMT");
  });
});

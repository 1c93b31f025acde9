import { EvalpApiError } from "@evalp/client";
import { describe, expect, it } from "vitest";
import { asCliError, CliError, errorLine } from "./errors.js";

describe("errorLine", () => {
  it("is `error <code>: <message> (request <id>)` on one line", () => {
    const error = new CliError("not_found", "App not found.\nTry again.", { requestId: "req-1" });
    expect(errorLine(error)).toBe("error not_found: App not found. Try again. (request req-1)");
    expect(errorLine(new CliError("usage", "no app id"))).toBe("error usage: no app id");
  });
});

describe("asCliError", () => {
  it("keeps the API's code, message and request id, exit code 1", () => {
    const api = new EvalpApiError({
      status: 403,
      code: "forbidden",
      message: "Missing scope.",
      requestId: "r-9",
    });
    const error = asCliError(api);
    expect(error).toMatchObject({
      code: "forbidden",
      message: "Missing scope.",
      requestId: "r-9",
      exitCode: 1,
    });
  });

  it("makes anything else `internal`", () => {
    expect(asCliError(new Error("boom"))).toMatchObject({ code: "internal", message: "boom", exitCode: 1 });
  });
});

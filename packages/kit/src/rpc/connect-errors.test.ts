import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { AppError } from "../core/errors.js";
import { fromConnectError, toConnectError } from "./connect-errors.js";

describe("errors across the wire", () => {
  it("carries the contract code and context through a ConnectError", () => {
    const sent = toConnectError(
      new AppError("revision_conflict", "Stale.", { expected_revision: 1, current_revision: 2 }),
    );
    expect(sent.code).toBe(Code.Aborted);
    const received = fromConnectError(sent);
    expect(received.code).toBe("revision_conflict");
    expect(received.message).toBe("Stale.");
    expect(received.context).toEqual({ expected_revision: 1, current_revision: 2 });
  });

  it("maps Postgres unique and foreign-key violations, and hides anything else as internal", () => {
    const unique = Object.assign(new Error("duplicate key value"), {
      code: "23505",
      severity: "ERROR",
      table: "apps",
    });
    expect(fromConnectError(toConnectError(unique)).code).toBe("already_exists");
    const foreign = Object.assign(new Error("violates foreign key"), { code: "23503", severity: "ERROR" });
    expect(fromConnectError(toConnectError(foreign)).code).toBe("not_found");
    const bug = toConnectError(new TypeError("cannot read properties of undefined (reading 'secret')"));
    const rendered = fromConnectError(bug);
    expect(rendered.code).toBe("internal");
    expect(rendered.message).not.toContain("secret");
    expect(rendered.context).toEqual({});
  });

  it("maps Postgres being down or restarting to unavailable, not internal", () => {
    const failures = [
      Object.assign(new Error("terminating connection due to administrator command"), {
        code: "57P01",
        severity: "FATAL",
      }),
      Object.assign(new Error("the database system is starting up"), { code: "57P03", severity: "FATAL" }),
      Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }),
      new Error("Connection terminated unexpectedly"),
      new Error("timeout exceeded when trying to connect"),
    ];
    for (const failure of failures) {
      const sent = toConnectError(failure);
      expect(sent.code, failure.message).toBe(Code.Unavailable);
      expect(fromConnectError(sent).code, failure.message).toBe("unavailable");
    }
    const syntax = Object.assign(new Error("syntax error"), { code: "42601", severity: "ERROR" });
    expect(fromConnectError(toConnectError(syntax)).code).toBe("internal");
  });

  it("maps a peer that is down or slow by its Connect code", () => {
    expect(fromConnectError(new ConnectError("connect ECONNREFUSED", Code.Unavailable)).code).toBe(
      "unavailable",
    );
    expect(fromConnectError(new ConnectError("deadline", Code.DeadlineExceeded)).code).toBe(
      "upstream_timeout",
    );
    expect(fromConnectError(new ConnectError("boom", Code.Unknown)).code).toBe("internal");
  });
});

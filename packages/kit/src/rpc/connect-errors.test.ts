import { randomInt } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { AppError } from "../core/errors.js";
import { createPool } from "../db/db.js";
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

  it("maps a transaction Postgres aborted for a deadlock, or a failed serialization, to unavailable", async () => {
    const pool = createPool({
      databaseUrl:
        process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? "postgres://127.0.0.1:5432/postgres",
      schema: "public",
      max: 2,
    });
    const [first, second] = await Promise.all([pool.connect(), pool.connect()]);
    try {
      const [a, b] = [randomInt(1, 2 ** 47), randomInt(1, 2 ** 47)];
      for (const client of [first, second]) await client.query("BEGIN");
      await first.query("SELECT pg_advisory_xact_lock($1)", [a]);
      await second.query("SELECT pg_advisory_xact_lock($1)", [b]);
      // Each waits for the lock the other holds; Postgres aborts one of the two.
      const outcomes = await Promise.allSettled([
        first.query("SELECT pg_advisory_xact_lock($1)", [b]),
        second.query("SELECT pg_advisory_xact_lock($1)", [a]),
      ]);
      const [lost] = outcomes.flatMap((outcome) => (outcome.status === "rejected" ? [outcome.reason] : []));
      expect((lost as { code?: string }).code).toBe("40P01");
      const sent = toConnectError(lost);
      expect(sent.code).toBe(Code.Unavailable);
      expect(fromConnectError(sent).code).toBe("unavailable");
      const serialization = Object.assign(new Error("could not serialize access"), {
        code: "40001",
        severity: "ERROR",
      });
      expect(fromConnectError(toConnectError(serialization)).code).toBe("unavailable");
    } finally {
      for (const client of [first, second]) client.release(true);
      await pool.end();
    }
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

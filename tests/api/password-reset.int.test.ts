import { beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { ApiClient } from "./support/client.js";
import { expectError, ik, signUp } from "./support/fixtures.js";
import { sentMail, tokenIn } from "./support/mail.js";
import { deleteKeys } from "./support/redis.js";
import { type Stack, useStack } from "./support/stack.js";

const SENDER = {
  MAIL_FROM: "Acme Evaluations <evaluations@acme.example>",
  MAIL_REPLY_TO: "support@acme.example",
};
const context = useStack(SENDER);
let stack: Stack;
let api: ApiClient;

beforeAll(() => {
  ({ stack, api } = context);
});

const mailTo = (email: string) => sentMail(stack.config.MAIL_DIR).filter((mail) => mail.to === email);

/**
 * Every test here comes from 127.0.0.1, so the per-IP attempt counters would carry from one test
 * into the next; each test starts with none, as a client from a fresh address would.
 */
beforeEach(async () => {
  await deleteKeys(stack.redis, `${stack.config.REDIS_KEY_PREFIX}attempts:*`);
});

describe("password reset (#1 and confirm)", () => {
  it("answers 202 accepted alike for known and unknown emails, mailing only the known one", async () => {
    const user = await signUp(api);
    const unknown = await api.post("/auth/password-reset/request", { email: "nobody-here@example.com" });
    expect(unknown.status).toBe(202);
    expect(unknown.body).toEqual({ status: "accepted" });
    const known = await api.post("/auth/password-reset/request", { email: user.email });
    expect(known.status).toBe(202);
    expect(known.body).toEqual({ status: "accepted" });
    await vi.waitFor(() => expect(mailTo(user.email)).toHaveLength(1));
    // The unknown address was handled first and sent nothing.
    expect(mailTo("nobody-here@example.com")).toEqual([]);
    expect(mailTo(user.email)[0]?.text).toMatch(/\/reset-password\?token=[0-9A-Za-z]+/);
    // From the configured sender, replies to the configured address.
    expect(mailTo(user.email)[0]).toMatchObject({ from: SENDER.MAIL_FROM, reply_to: SENDER.MAIL_REPLY_TO });
  });

  it("sets the new password, revokes every session, and makes the old password fail", async () => {
    const user = await signUp(api);
    const other = await api.post("/auth/login", { email: user.email, password: user.password });
    await api.post("/auth/password-reset/request", { email: user.email });
    await vi.waitFor(() => expect(mailTo(user.email)).toHaveLength(1));
    const token = tokenIn(mailTo(user.email)[0]);

    const confirmed = await api.post("/auth/password-reset/confirm", {
      token,
      password: "a brand new password",
    });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toEqual({ status: "reset" });
    expectError(await api.get("/v1/auth/principal", { token: user.token }), 401, "unauthenticated");
    expectError(
      await api.get("/v1/auth/principal", { token: other.body.access_token }),
      401,
      "unauthenticated",
    );
    expectError(
      await api.post("/auth/login", { email: user.email, password: user.password }),
      401,
      "invalid_credentials",
    );
    expect(
      (await api.post("/auth/login", { email: user.email, password: "a brand new password" })).status,
    ).toBe(200);

    // Single use.
    expectError(
      await api.post("/auth/password-reset/confirm", { token, password: "yet another password" }),
      410,
      "reset_token_expired",
    );
    const audit = await api.get(
      `/v1/organizations/${user.organizationId}/audit-events?action=user.password_reset`,
      {
        token: (await api.post("/auth/login", { email: user.email, password: "a brand new password" })).body
          .access_token,
      },
    );
    expect(audit.body.items).toHaveLength(1);
    expect(audit.body.items[0]).toMatchObject({ actor_kind: "user", metadata: { sessions_revoked: 2 } });
  });

  it("refuses an expired token with 410 and an unknown one with 404", async () => {
    const user = await signUp(api);
    await api.post("/auth/password-reset/request", { email: user.email });
    await vi.waitFor(() => expect(mailTo(user.email)).toHaveLength(1));
    await stack.db.query("UPDATE password_resets SET expires_at = now() - interval '1 second'");
    expectError(
      await api.post("/auth/password-reset/confirm", {
        token: tokenIn(mailTo(user.email)[0]),
        password: "new password",
      }),
      410,
      "reset_token_expired",
    );
    expect((await api.post("/auth/login", { email: user.email, password: user.password })).status).toBe(200);
    expectError(
      await api.post("/auth/password-reset/confirm", { token: "unknown", password: "new password" }),
      404,
      "not_found",
    );
  });
});

describe("anonymous password hashing (20 a minute per address)", () => {
  it("counts sign-ups, invitation acceptances and reset confirmations of an address: the 21st is 429", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      statuses.push(
        (
          await api.post(
            "/v1/invitations/accept",
            { token: `made-up-${i}`, password: "a password" },
            { idempotencyKey: ik() },
          )
        ).status,
        (await api.post("/auth/password-reset/confirm", { token: `made-up-${i}`, password: "a password" }))
          .status,
      );
    }
    expect(statuses).toEqual(Array(20).fill(404));
    // A request refused by validation never reaches a hash, and is not counted.
    expect(
      (await api.post("/auth/signup", { email: "half@example.com", password: "a password" })).status,
    ).toBe(422);
    const limited = await api.post("/auth/signup", {
      email: "late@example.com",
      password: "a password",
      organization_name: "Late",
    });
    expectError(limited, 429, "rate_limited");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});

describe("brute-force limits (5 a minute per email and per IP)", () => {
  it("limits login attempts per email: the sixth answers 429 rate_limited with Retry-After", async () => {
    const user = await signUp(api);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      statuses.push(
        (await api.post("/auth/login", { email: user.email, password: "guess" }, { idempotencyKey: ik() }))
          .status,
      );
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    const limited = await api.post("/auth/login", { email: user.email, password: user.password });
    expectError(limited, 429, "rate_limited");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(Number(limited.headers.get("retry-after"))).toBeLessThanOrEqual(60);
  });

  it("limits login attempts per IP across emails", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      statuses.push(
        (await api.post("/auth/login", { email: `someone${i}@example.com`, password: "guess" })).status,
      );
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
  });

  it("limits reset requests per email and keeps answering 202 until then", async () => {
    const user = await signUp(api);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await api.post("/auth/password-reset/request", { email: user.email })).status);
    expect(statuses).toEqual([202, 202, 202, 202, 202, 429]);
  });
});

import { describe, expect, it } from "vitest";
import { AppError } from "../core/errors.js";
import { looksLikeJwt, signParticipantToken, verifyParticipantToken } from "./participant-tokens.js";

const SECRET = "unit-test-secret-unit-test-secret-0123456789";
const claims = {
  sessionId: "0190f0c4-0000-7000-8000-000000000001",
  evaluationId: "0190f0c4-0000-7000-8000-000000000002",
  environmentId: "0190f0c4-0000-7000-8000-000000000003",
};
const inAMinute = () => new Date(Date.now() + 60_000);

async function codeOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(AppError);
  return (error as AppError).code;
}

describe("participant tokens", () => {
  it("round-trips the session, evaluation and environment of a token of one use", async () => {
    const expiresAt = new Date(Math.floor(Date.now() / 1000) * 1000 + 60_000);
    const token = await signParticipantToken(SECRET, "participant", claims, expiresAt);
    expect(looksLikeJwt(token)).toBe(true);
    expect(await verifyParticipantToken(SECRET, "participant", token)).toEqual({ ...claims, expiresAt });
  });

  it("keeps agent tokens (docs/interview.md#the-agent-protocol) apart from both participant uses", async () => {
    const agent = await signParticipantToken(SECRET, "agent", claims, inAMinute());
    expect((await verifyParticipantToken(SECRET, "agent", agent)).sessionId).toBe(claims.sessionId);
    expect(await codeOf(verifyParticipantToken(SECRET, "participant", agent))).toBe("unauthenticated");
    expect(await codeOf(verifyParticipantToken(SECRET, "connection", agent))).toBe("unauthenticated");
    const participant = await signParticipantToken(SECRET, "participant", claims, inAMinute());
    expect(await codeOf(verifyParticipantToken(SECRET, "agent", participant))).toBe("unauthenticated");
  });

  it("refuses a token of the other use, another secret, or a tampered payload as unauthenticated", async () => {
    const connection = await signParticipantToken(SECRET, "connection", claims, inAMinute());
    expect(await codeOf(verifyParticipantToken(SECRET, "participant", connection))).toBe("unauthenticated");
    const participant = await signParticipantToken(SECRET, "participant", claims, inAMinute());
    expect(await codeOf(verifyParticipantToken(SECRET, "connection", participant))).toBe("unauthenticated");
    expect(await codeOf(verifyParticipantToken(`${SECRET}x`, "participant", participant))).toBe(
      "unauthenticated",
    );
    const [header, , signature] = participant.split(".");
    const forged = Buffer.from(JSON.stringify({ sub: "x", exp: 9_999_999_999 })).toString("base64url");
    expect(
      await codeOf(verifyParticipantToken(SECRET, "participant", `${header}.${forged}.${signature}`)),
    ).toBe("unauthenticated");
    expect(await codeOf(verifyParticipantToken(SECRET, "participant", "evk_not_a_jwt"))).toBe(
      "unauthenticated",
    );
  });

  it("answers token_expired past exp, but only for a genuine token", async () => {
    const expired = await signParticipantToken(SECRET, "participant", claims, new Date(Date.now() - 5_000));
    expect(await codeOf(verifyParticipantToken(SECRET, "participant", expired))).toBe("token_expired");
    expect(await codeOf(verifyParticipantToken(`${SECRET}x`, "participant", expired))).toBe(
      "unauthenticated",
    );
  });
});

describe("REALTIME_URL", () => {
  it("defaults to the gateway's WebSocket door under PUBLIC_URL and can be set", async () => {
    const { loadConfig, realtimeUrlOf } = await import("../config/config.js");
    expect(realtimeUrlOf("http://127.0.0.1:8080")).toBe("ws://127.0.0.1:8080/v1/participant/realtime");
    expect(realtimeUrlOf("https://api.example.com/base/")).toBe(
      "wss://api.example.com/base/v1/participant/realtime",
    );
    const env = { JWT_SECRET: SECRET, PUBLIC_URL: "https://api.example.com" };
    expect(loadConfig(env).REALTIME_URL).toBe("wss://api.example.com/v1/participant/realtime");
    expect(loadConfig({ ...env, REALTIME_URL: "wss://rt.example.com/socket" }).REALTIME_URL).toBe(
      "wss://rt.example.com/socket",
    );
  });
});

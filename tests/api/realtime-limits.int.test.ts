import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, apiClient } from "./support/client.js";
import { createTenant } from "./support/fixtures.js";
import {
  consentedInterview,
  type InterviewSetup,
  interviewSetup,
  openSocket,
  type Socket,
} from "./support/interview.js";
import { type Stack, startStack } from "./support/stack.js";

// A realtime socket may not make the gateway queue or read without end: too large a frame, too
// many a second, or too many waiting close it with 1008 and a reason; other sockets go on (the
// flood: tests/reliability/abuse.rel.test.ts, against the processes).
let stack: Stack;
let api: ApiClient;
let setup: InterviewSetup;

beforeAll(async () => {
  stack = await startStack();
  api = apiClient(stack.urls);
  setup = await interviewSetup(api, await createTenant(api));
});
afterAll(async () => {
  await stack?.close();
});

const closed = (socket: Socket) =>
  new Promise<{ code: number; reason: string }>((resolve) =>
    socket.ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })),
  );

describe("realtime frame limits", () => {
  it("closes a socket that sends a frame over 64 KiB with 1008", async () => {
    const { started } = await consentedInterview(api, setup);
    const socket = await openSocket(started.connection.server_url, started.connection.participant_token);
    const ended = closed(socket);
    socket.ws.send("x".repeat(64 * 1024 + 1));
    expect(await ended).toEqual({ code: 1008, reason: "frame larger than 65536 bytes" });
  });
});

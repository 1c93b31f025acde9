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
// many a second, or too many waiting close it with 1008 and a reason; other sockets go on.
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
const utterance = (text: string) =>
  JSON.stringify({ type: "utterance", modality: "text", text, started_at: new Date().toISOString() });

describe("realtime frame limits", () => {
  it("closes a socket that sends a frame over 64 KiB with 1008", async () => {
    const { started } = await consentedInterview(api, setup);
    const socket = await openSocket(started.connection.server_url, started.connection.participant_token);
    const ended = closed(socket);
    socket.ws.send("x".repeat(64 * 1024 + 1));
    expect(await ended).toEqual({ code: 1008, reason: "frame larger than 65536 bytes" });
  });

  it("closes a socket that floods frames with 1008, while another socket of the interview goes on", async () => {
    const { started } = await consentedInterview(api, setup);
    const { server_url, participant_token } = started.connection;
    const flooding = await openSocket(server_url, participant_token);
    const steady = await openSocket(server_url, participant_token);
    const ended = closed(flooding);
    for (let i = 0; i < 200; i++) flooding.ws.send(utterance(`flood ${i}`));
    const { code, reason } = await ended;
    expect(code).toBe(1008);
    expect(reason).toMatch(/^more than \d+ frames (a second|waiting)$/);
    steady.ws.send(utterance("still here"));
    let frame = await steady.next();
    while (frame.type !== "entry" || frame.entry.text !== "still here") frame = await steady.next();
    expect(frame).toMatchObject({ type: "entry", entry: { speaker: "participant", text: "still here" } });
    await steady.close();
  });
});

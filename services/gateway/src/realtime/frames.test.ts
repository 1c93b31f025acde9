import { EventEmitter } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import type { WebSocket } from "ws";
import { FRAME_LIMITS, POLICY_VIOLATION, receiveFrames } from "./frames.js";

/** Just enough of a ws socket: messages in, the close it was asked for out. */
function fakeSocket() {
  const emitter = new EventEmitter();
  const socket = Object.assign(emitter, {
    OPEN: 1,
    readyState: 1,
    closedWith: null as null | { code: number; reason: string },
    close(code: number, reason: string) {
      socket.closedWith = { code, reason };
      socket.readyState = 3;
    },
  });
  return socket;
}
const flush = () => new Promise((resolve) => setImmediate(resolve));

describe("receiveFrames", () => {
  it("handles frames one at a time, in order, after what comes first", async () => {
    const socket = fakeSocket();
    const seen: string[] = [];
    let release: () => void = () => {};
    const first = new Promise<void>((resolve) => {
      release = resolve;
    });
    const frames = receiveFrames(socket as unknown as WebSocket, async (text) => void seen.push(text), first);
    socket.emit("message", Buffer.from("a"));
    socket.emit("message", Buffer.from("b"));
    frames.after(async () => void seen.push("closed"));
    await flush();
    expect(seen).toEqual([]);
    release();
    await flush();
    expect(seen).toEqual(["a", "b", "closed"]);
  });

  it("closes with 1008 past the frames a second, though each was handled at once", async () => {
    const socket = fakeSocket();
    let handled = 0;
    receiveFrames(socket as unknown as WebSocket, async () => void handled++);
    // Sent at the start of a second, so that all of them fall in one.
    while (Date.now() % 1000 > 500) await sleep(5);
    for (let i = 0; i <= FRAME_LIMITS.perSecond; i++) {
      socket.emit("message", Buffer.from("{}"));
      await flush();
    }
    expect(socket.closedWith).toEqual({
      code: POLICY_VIOLATION,
      reason: `more than ${FRAME_LIMITS.perSecond} frames a second`,
    });
    expect(handled).toBe(FRAME_LIMITS.perSecond);
  });

  it("closes with 1008 when more frames wait than it queues", async () => {
    const socket = fakeSocket();
    receiveFrames(socket as unknown as WebSocket, () => new Promise(() => {}));
    for (let i = 0; i <= FRAME_LIMITS.queued; i++) socket.emit("message", Buffer.from("{}"));
    expect(socket.closedWith).toEqual({
      code: POLICY_VIOLATION,
      reason: `more than ${FRAME_LIMITS.queued} frames waiting`,
    });
  });
});

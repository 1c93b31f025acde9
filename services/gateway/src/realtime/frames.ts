import type { WebSocket } from "ws";

/**
 * What one realtime socket may send (the participant's and the agent's): frames are handled one
 * at a time, in order, and a client that sends faster than that, or frames no command needs to
 * be, is not queued without end — its socket closes with 1008 (policy violation) and a reason.
 * A frame past the `ws` server's own `maxPayload` (1 MiB) closes it with 1009 before it is read.
 */
export const FRAME_LIMITS = {
  /** The largest command is a 10,000-character text and a few fields: 64 KiB holds any. */
  maxBytes: 64 * 1024,
  /**
   * Frames in any one second. An agent answers one command at a time and may send its next the
   * moment the ack arrives (the reference agent's scripted run: dozens in a second); a flood is
   * many times that, and the queue bound below catches a burst first.
   */
  perSecond: 100,
  /** Frames received and not yet handled. */
  queued: 32,
} as const;

/** RFC 6455: the endpoint is terminating the connection because a message violates its policy. */
export const POLICY_VIOLATION = 1008;

/** A socket's frames in order; `after` appends other work (the socket's close) to the same line. */
export type FrameQueue = { after(work: () => Promise<void>): void };

/**
 * Handles a socket's text frames one after the other with `handle`, after `first` (what must be
 * done before the first frame: the agent's connection recorded), within FRAME_LIMITS.
 */
export function receiveFrames(
  socket: WebSocket,
  handle: (text: string, receivedAt: Date) => Promise<void>,
  first: Promise<unknown> = Promise.resolve(),
): FrameQueue {
  let queue: Promise<unknown> = first;
  let waiting = 0;
  let second = 0;
  let inSecond = 0;
  const violate = (reason: string) => {
    if (socket.readyState === socket.OPEN) socket.close(POLICY_VIOLATION, reason);
  };
  socket.on("message", (data) => {
    const receivedAt = new Date();
    if (socket.readyState !== socket.OPEN) return;
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
    if (bytes.length > FRAME_LIMITS.maxBytes)
      return violate(`frame larger than ${FRAME_LIMITS.maxBytes} bytes`);
    const now = Math.floor(receivedAt.getTime() / 1000);
    if (now !== second) [second, inSecond] = [now, 0];
    inSecond += 1;
    if (inSecond > FRAME_LIMITS.perSecond)
      return violate(`more than ${FRAME_LIMITS.perSecond} frames a second`);
    if (waiting >= FRAME_LIMITS.queued) return violate(`more than ${FRAME_LIMITS.queued} frames waiting`);
    waiting += 1;
    const text = bytes.toString("utf8");
    queue = queue
      .then(() => handle(text, receivedAt))
      .catch(() => {})
      .finally(() => {
        waiting -= 1;
      });
  });
  return {
    after(work) {
      queue = queue.then(work).catch(() => {});
    },
  };
}

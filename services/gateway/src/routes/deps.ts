import type { Config } from "@evalp/kit";
import type { CursorCodec } from "../http/cursor.js";
import type { AttemptLimiter } from "../plugins/attempt-limit.js";
import type { InterviewHub } from "../realtime/hub.js";
import type { SocketSlots } from "../realtime/socket-slots.js";
import type { Upstreams } from "../upstream.js";

/** What route handlers are a function of. */
export type RouteDeps = {
  config: Pick<
    Config,
    | "NODE_ENV"
    | "SIGNUP_ENABLED"
    | "AGENT_DISCONNECT_PAUSE_MS"
    | "REALTIME_URL"
    | "INVITATIONS_PER_ORGANIZATION_PER_HOUR"
    | "PUBLIC_URL"
  >;
  upstreams: Upstreams;
  cursors: CursorCodec;
  attempts: AttemptLimiter;
  /** The open interview sockets of this process, and the state pushed to them (docs/interview.md#the-agent-protocol). */
  hub: InterviewHub;
  /** Open participant sockets per session and per address, counted across every gateway. */
  sockets: SocketSlots;
  /** Open event streams (`GET ENV/events/stream`) per credential and per address, counted the same way. */
  eventStreams: SocketSlots;
};

import { fromBinary } from "@bufbuild/protobuf";
import { type Client, ConnectError } from "@connectrpc/connect";
import { AppError, fromConnectError, isErrorCode, type Logger, type NatsConnection } from "@evalp/kit";
import type { AgentRef, AgentService } from "@evalp/proto/interview/v1/agent";
import { RealtimeFrameSchema } from "@evalp/proto/interview/v1/realtime";
import type { Subscription } from "@nats-io/transport-node";
import type { WebSocket } from "ws";
import { interviewJson, transcriptJson } from "../routes/interview/wire.js";
import { traceFrame } from "./frame-tracing.js";
import { sendError, sendFrame, TOKEN_EXPIRED_CLOSE } from "./protocol.js";

/** An agent socket this gateway holds, and the connection the interview plane knows it by. */
export type AgentSocket = { socket: WebSocket; ref: AgentRef; connectionId: string; superseded: boolean };

/** How often this gateway renews the leases of the agent sockets it holds (a third of the lease). */
const RENEW_EVERY_MS = 2_000;

/**
 * The sockets of the interviews this gateway holds, and what reaches them (docs/interview.md).
 * What an interview's sockets must see is published by the interview plane on core NATS, one
 * subject per interview, and every gateway relays it to the sockets it holds: so a participant
 * and an agent connected through different gateways see the same frames. This gateway listens to
 * an interview's subject while it holds one of its sockets. Who holds the voice, and when an
 * interview pauses because its agent left, the interview plane keeps (connections with leases
 * that this gateway renews for the agent sockets it holds).
 */
export class InterviewHub {
  private readonly participants = new Map<string, Set<WebSocket>>();
  /** The participant session each participant socket held here was opened for. */
  private readonly sessionOf = new WeakMap<WebSocket, string>();
  private readonly agents = new Map<string, Set<AgentSocket>>();
  /** The highest revision pushed per interview: frames arrive from several paths, each is sent once. */
  private readonly pushed = new Map<string, number>();
  private readonly subscriptions = new Map<string, Subscription>();
  private nc: NatsConnection | null = null;
  private readonly renewal: NodeJS.Timeout;

  constructor(
    private readonly options: {
      agent: Client<typeof AgentService>;
      subjectPrefix: string;
      logger: Logger;
    },
  ) {
    this.renewal = setInterval(() => void this.renew(), RENEW_EVERY_MS);
    this.renewal.unref();
  }

  /** The NATS connection to listen on, once there is one: the interviews held are subscribed. */
  attach(nc: NatsConnection): void {
    this.nc = nc;
    for (const evaluationId of new Set([...this.participants.keys(), ...this.agents.keys()])) {
      this.listen(evaluationId);
    }
  }

  addParticipant(evaluationId: string, socket: WebSocket, sessionId: string): void {
    this.sessionOf.set(socket, sessionId);
    const set = this.participants.get(evaluationId) ?? new Set();
    set.add(socket);
    this.participants.set(evaluationId, set);
    this.listen(evaluationId);
  }

  removeParticipant(evaluationId: string, socket: WebSocket): void {
    const set = this.participants.get(evaluationId);
    set?.delete(socket);
    if (set?.size === 0) this.participants.delete(evaluationId);
    this.forgetIfIdle(evaluationId);
  }

  addAgent(ref: AgentRef, connectionId: string, socket: WebSocket): AgentSocket {
    const entry = { socket, ref, connectionId, superseded: false };
    const set = this.agents.get(ref.evaluationId) ?? new Set();
    set.add(entry);
    this.agents.set(ref.evaluationId, set);
    this.listen(ref.evaluationId);
    return entry;
  }

  removeAgent(entry: AgentSocket): void {
    const evaluationId = entry.ref.evaluationId;
    const set = this.agents.get(evaluationId);
    set?.delete(entry);
    if (set?.size === 0) this.agents.delete(evaluationId);
    this.forgetIfIdle(evaluationId);
  }

  /**
   * Closes the sockets of superseded agent sessions held here with an error frame
   * `session_superseded`; the interview plane publishes the same to every other gateway.
   */
  supersede(evaluationId: string, agentSessionIds: readonly string[]): void {
    for (const entry of this.agents.get(evaluationId) ?? []) {
      if (!agentSessionIds.includes(entry.ref.agentSessionId)) continue;
      this.closeAgent(entry, "session_superseded", "A newer agent session replaced this one.");
    }
  }

  /** Ends an agent socket with an error frame; its connection no longer speaks for the agent. */
  closeAgent(entry: AgentSocket, code: "session_superseded" | "token_expired", message: string): void {
    if (entry.superseded) return;
    entry.superseded = true;
    sendError(entry.socket, new AppError(code, message));
    entry.socket.close(TOKEN_EXPIRED_CLOSE, code);
  }

  /**
   * Closes the sockets of revoked participant sessions held here with 4401 and an error frame
   * (docs/interview.md#participant-sessions): `session_superseded` when a newer session replaced
   * them, else `unauthenticated`. The interview plane publishes the same to every other gateway.
   */
  revokeParticipants(
    evaluationId: string,
    sessionIds: readonly string[],
    why: "revoked" | "superseded",
  ): void {
    if (sessionIds.length === 0) return;
    const error =
      why === "superseded"
        ? new AppError("session_superseded", "A newer participant session replaced this one.")
        : new AppError("unauthenticated", "This participant session was revoked.");
    for (const socket of this.participants.get(evaluationId) ?? []) {
      const sessionId = this.sessionOf.get(socket);
      if (sessionId === undefined || !sessionIds.includes(sessionId)) continue;
      if (socket.readyState !== socket.OPEN) continue;
      sendError(socket, error);
      socket.close(TOKEN_EXPIRED_CLOSE, why === "superseded" ? "session_superseded" : "session_revoked");
    }
  }

  /**
   * Ends every socket of the interview held here with an error frame of `code` (the interview's
   * subject was erased: its sessions no longer exist), closing with 4401 as a revoked token does.
   */
  closeAll(evaluationId: string, code: string, message: string): void {
    const error = new AppError(isErrorCode(code) ? code : "unauthenticated", message);
    for (const socket of this.participants.get(evaluationId) ?? []) {
      sendError(socket, error);
      socket.close(TOKEN_EXPIRED_CLOSE, code);
    }
    for (const entry of this.agents.get(evaluationId) ?? []) {
      if (entry.superseded) continue;
      entry.superseded = true;
      sendError(entry.socket, error);
      entry.socket.close(TOKEN_EXPIRED_CLOSE, code);
    }
  }

  /** Pushes `{"type":"state","interview"}` to both sides' sockets held here, once per revision. */
  deliverState(evaluationId: string, interview: { revision: number }): void {
    if ((this.pushed.get(evaluationId) ?? -1) >= interview.revision) return;
    this.pushed.set(evaluationId, interview.revision);
    const frame = { type: "state", interview };
    for (const socket of this.participants.get(evaluationId) ?? []) sendFrame(socket, frame);
    for (const entry of this.agents.get(evaluationId) ?? []) {
      if (!entry.superseded) sendFrame(entry.socket, frame);
    }
  }

  /** The sockets this gateway holds, by door (an agent socket being closed as superseded included). */
  openSockets(): Record<"participant" | "agent", number> {
    let participant = 0;
    let agent = 0;
    for (const set of this.participants.values()) participant += set.size;
    for (const set of this.agents.values()) agent += set.size;
    return { participant, agent };
  }

  close(): void {
    clearInterval(this.renewal);
    for (const subscription of this.subscriptions.values()) subscription.unsubscribe();
    this.subscriptions.clear();
  }

  private listen(evaluationId: string): void {
    if (!this.nc || this.nc.isClosed() || this.subscriptions.has(evaluationId)) return;
    const subject = `${this.options.subjectPrefix}.${evaluationId}`;
    const subscription = this.nc.subscribe(subject, {
      callback: (error, message) => {
        if (!error) traceFrame(message, evaluationId, () => this.receive(evaluationId, message.data));
      },
    });
    this.subscriptions.set(evaluationId, subscription);
  }

  private forgetIfIdle(evaluationId: string): void {
    if (this.participants.has(evaluationId) || this.agents.has(evaluationId)) return;
    this.subscriptions.get(evaluationId)?.unsubscribe();
    this.subscriptions.delete(evaluationId);
    this.pushed.delete(evaluationId);
  }

  /**
   * One frame from the interview plane. NATS is not trusted further than it must be: a frame
   * that does not decode, or that names another interview than its subject, is dropped.
   */
  private receive(evaluationId: string, data: Uint8Array): void {
    let frame: ReturnType<typeof fromBinary<typeof RealtimeFrameSchema>>;
    try {
      frame = fromBinary(RealtimeFrameSchema, data);
    } catch (error) {
      this.options.logger.warn(
        { err: error, evaluation_id: evaluationId },
        "realtime frame dropped: not a frame",
      );
      return;
    }
    if (frame.evaluationId !== evaluationId) {
      this.options.logger.warn(
        { evaluation_id: evaluationId },
        "realtime frame dropped: another interview's",
      );
      return;
    }
    switch (frame.frame.case) {
      case "state":
        this.deliverState(evaluationId, interviewJson(frame.frame.value));
        return;
      case "agentTurn": {
        const message = { type: "entry", entry: transcriptJson(frame.frame.value) };
        for (const socket of this.participants.get(evaluationId) ?? []) sendFrame(socket, message);
        return;
      }
      case "superseded":
        this.supersede(evaluationId, frame.frame.value.agentSessionIds);
        return;
      case "revoked": {
        const { participantSessionIds, superseded } = frame.frame.value;
        this.revokeParticipants(evaluationId, participantSessionIds, superseded ? "superseded" : "revoked");
        return;
      }
      case "closed":
        this.closeAll(evaluationId, frame.frame.value.code, frame.frame.value.message);
        return;
      default:
        return;
    }
  }

  /**
   * Renews the leases of the agent sockets held here. A connection the interview plane no longer
   * knows (its lease lapsed while this gateway could not reach it) is opened again; one whose
   * session was superseded or expired meanwhile is closed.
   */
  private async renew(): Promise<void> {
    const held = [...this.agents.values()].flatMap((set) => [...set]).filter((entry) => !entry.superseded);
    if (held.length === 0) return;
    try {
      const answer = await this.options.agent.renewAgentConnections(
        { connectionIds: held.map((entry) => entry.connectionId) },
        { timeoutMs: RENEW_EVERY_MS },
      );
      const unknown = new Set(answer.unknownConnectionIds);
      for (const entry of held.filter((candidate) => unknown.has(candidate.connectionId))) {
        await this.options.agent
          .openAgentConnection(
            { agent: entry.ref, connectionId: entry.connectionId },
            { timeoutMs: RENEW_EVERY_MS },
          )
          .then(
            (opened) =>
              opened.interview && this.deliverState(entry.ref.evaluationId, interviewJson(opened.interview)),
            (error: unknown) => {
              const refused = error instanceof ConnectError ? fromConnectError(error) : null;
              if (refused?.code === "session_superseded" || refused?.code === "token_expired") {
                this.closeAgent(entry, refused.code, refused.message);
              } else {
                this.options.logger.warn({ err: error }, "agent connection not opened again");
              }
            },
          );
      }
    } catch (error) {
      // The interview plane is unreachable: the next renewal tries again (leases outlast two misses).
      this.options.logger.warn({ err: error }, "agent connection leases not renewed");
    }
  }
}

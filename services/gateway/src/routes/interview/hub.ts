import type { WebSocket } from "ws";

type AgentSocket = { socket: WebSocket; agentSessionId: string; superseded: boolean };

/**
 * The gateway's in-process fan-out of interview state (contract §9): the open participant and
 * agent sockets of each evaluation, the last revision pushed to them, and the timers that pause an
 * interview whose agent socket stays closed. One gateway process only: with several gateway
 * replicas this becomes a NATS subject per interview.
 */
export class InterviewHub {
  private readonly participants = new Map<string, Set<WebSocket>>();
  private readonly agents = new Map<string, Set<AgentSocket>>();
  private readonly pushed = new Map<string, number>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly connectionChanges = new Map<string, Promise<void>>();

  addParticipant(evaluationId: string, socket: WebSocket): void {
    const set = this.participants.get(evaluationId) ?? new Set();
    set.add(socket);
    this.participants.set(evaluationId, set);
  }

  removeParticipant(evaluationId: string, socket: WebSocket): void {
    this.participants.get(evaluationId)?.delete(socket);
  }

  addAgent(evaluationId: string, agentSessionId: string, socket: WebSocket): AgentSocket {
    const entry = { socket, agentSessionId, superseded: false };
    const set = this.agents.get(evaluationId) ?? new Set();
    set.add(entry);
    this.agents.set(evaluationId, set);
    this.cancelPause(evaluationId);
    return entry;
  }

  removeAgent(evaluationId: string, entry: AgentSocket): void {
    this.agents.get(evaluationId)?.delete(entry);
  }

  /** True while an agent socket of the evaluation is open (`agent_connected`). */
  agentConnected(evaluationId: string): boolean {
    return [...(this.agents.get(evaluationId) ?? [])].some((entry) => !entry.superseded);
  }

  /**
   * Runs the agent connection changes of one evaluation one after another, in the order they were
   * asked for: when an agent socket closes and another opens at once, the "connected" of the new
   * one must not be overtaken by the "disconnected" of the old (the interview would record no
   * agent while one is connected).
   */
  inOrder(evaluationId: string, change: () => Promise<void>): Promise<void> {
    const next = (this.connectionChanges.get(evaluationId) ?? Promise.resolve()).then(change);
    this.connectionChanges.set(evaluationId, next);
    void next.finally(() => {
      if (this.connectionChanges.get(evaluationId) === next) this.connectionChanges.delete(evaluationId);
    });
    return next;
  }

  /** Closes the sockets of superseded agent sessions with an error frame `session_superseded`. */
  supersede(evaluationId: string, agentSessionIds: string[]): void {
    for (const entry of this.agents.get(evaluationId) ?? []) {
      if (!agentSessionIds.includes(entry.agentSessionId)) continue;
      entry.superseded = true;
      send(entry.socket, {
        type: "error",
        code: "session_superseded",
        message: "A newer agent session replaced this one.",
        context: {},
      });
      entry.socket.close(4401, "session_superseded");
    }
  }

  /** Runs `pause` after `delayMs` unless an agent socket of the evaluation opens meanwhile. */
  schedulePause(evaluationId: string, delayMs: number, pause: () => void): void {
    this.cancelPause(evaluationId);
    const timer = setTimeout(() => {
      this.timers.delete(evaluationId);
      if (!this.agentConnected(evaluationId)) pause();
    }, delayMs);
    timer.unref();
    this.timers.set(evaluationId, timer);
  }

  cancelPause(evaluationId: string): void {
    const timer = this.timers.get(evaluationId);
    if (timer) clearTimeout(timer);
    this.timers.delete(evaluationId);
  }

  /** Pushes `{"type":"state","interview"}` to both sides when the revision changed since the last push. */
  publish(evaluationId: string, interview: { revision: number }): void {
    if (this.pushed.get(evaluationId) === interview.revision) return;
    this.pushed.set(evaluationId, interview.revision);
    const frame = { type: "state", interview };
    for (const socket of this.participants.get(evaluationId) ?? []) send(socket, frame);
    for (const entry of this.agents.get(evaluationId) ?? []) {
      if (!entry.superseded) send(entry.socket, frame);
    }
  }

  close(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}

export function send(socket: WebSocket, message: unknown): void {
  if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
}

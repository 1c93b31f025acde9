import { randomUUID } from "node:crypto";
import { AppError, type PydanticItem } from "@evalp/kit";
import type { FastifyRequest } from "fastify";
import type { WebSocket } from "ws";
import { toAppError } from "../../plugins/errors.js";
import { socketDoor } from "../../realtime/door.js";
import { receiveFrames } from "../../realtime/frames.js";
import { atFrame, invalidFrame, parseFrame, sendError, sendFrame } from "../../realtime/protocol.js";
import { callOptions } from "../../upstream.js";
import type { RouteDeps } from "../deps.js";
import { type AgentCommand, commandProblems, commandRunner } from "./commands.js";
import type { InterviewApi } from "./index.js";
import { agentRef, interviewJson } from "./wire.js";

/** A validation error in the service's answer speaks of `body`; on the socket it speaks of `frame`. */
function fromFrame(error: AppError): AppError {
  if (error.code !== "validation_error" || !Array.isArray(error.context.detail)) return error;
  const detail = atFrame(error.context.detail as PydanticItem[]);
  return new AppError(error.code, error.message, { ...error.context, detail });
}

/** `GET /v1/agent/realtime` (docs/interview.md#the-agent-protocol): the agent's WebSocket, described by `createAgentSession`. */
export function agentRealtimeRoutes(app: InterviewApi<"/v1/agent">, deps: RouteDeps): void {
  const agent = deps.upstreams.interview.agent;
  const hub = deps.hub;
  const run = commandRunner(deps);

  // Before the upgrade: an unknown, expired or superseded agent session gets no socket.
  socketDoor(
    app,
    "/realtime",
    "agent",
    (request) => agent.getAgentInterview({ agent: agentRef(request) }, callOptions(request)),
    agentSocket,
  );

  /**
   * One agent socket: frames are commands, handled one at a time in order, each answered with an
   * ack or an error frame (`id` when the frame had one); the socket stays open. The interview
   * plane records the socket as a connection (whichever gateway holds it, the agent owns the
   * voice while it is open); when it closes and no agent socket reopens within
   * AGENT_DISCONNECT_PAUSE_MS, the interview plane pauses the interview (`agent_disconnected`).
   */
  function agentSocket(socket: WebSocket, request: FastifyRequest) {
    const ref = agentRef(request);
    const evaluationId = ref.evaluationId;
    const entry = hub.addAgent(ref, randomUUID(), socket);
    // Commands wait until the connection is recorded: the agent owns the voice before it speaks.
    const opened = agent
      .openAgentConnection({ agent: ref, connectionId: entry.connectionId }, callOptions(request))
      .then(
        (answer) => {
          if (answer.interview) hub.deliverState(evaluationId, interviewJson(answer.interview));
        },
        (error: unknown) => {
          // Superseded or expired between the upgrade and now: this socket speaks for no one.
          const appError = toAppError(error);
          if (appError.code === "session_superseded" || appError.code === "token_expired") {
            hub.closeAgent(entry, appError.code, appError.message);
          } else {
            // The plane is unreachable just now: the lease renewal opens the connection later.
            request.log.warn({ err: error }, "agent connection not recorded yet");
          }
        },
      );
    const handle = async (text: string, receivedAt: Date) => {
      const parsed = parseFrame(text);
      if ("error" in parsed) return sendError(socket, parsed.error);
      const id = (parsed.value as { id?: unknown } | null)?.id;
      const problems = commandProblems(parsed.value, "frame");
      if (problems.length > 0) return sendError(socket, invalidFrame(problems), id);
      try {
        const { ack } = await run(request, parsed.value as AgentCommand, receivedAt);
        sendFrame(socket, ack);
      } catch (error) {
        const appError = toAppError(error);
        if (appError.status >= 500) request.log.error({ err: appError.cause ?? error }, "agent frame failed");
        sendError(socket, fromFrame(appError), id);
      }
    };
    const frames = receiveFrames(socket, handle, opened);
    const expiresIn = (request.agent?.expiresAt.getTime() ?? 0) - Date.now();
    const expiry = setTimeout(
      () => hub.closeAgent(entry, "token_expired", "The agent token has expired."),
      Math.max(expiresIn, 0),
    );
    socket.on("close", () => {
      clearTimeout(expiry);
      hub.removeAgent(entry);
      // After the commands it carried; a superseded session's connection is gone already.
      frames.after(async () => {
        await agent
          .closeAgentConnection({ agent: ref, connectionId: entry.connectionId }, callOptions(request))
          .catch((error: unknown) => {
            // The plane is unreachable: the connection's lease lapses, with the same outcome.
            request.log.warn({ err: error }, "agent connection close not recorded");
          });
      });
    });
  }
}

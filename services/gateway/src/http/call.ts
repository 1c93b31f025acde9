import { AppError, metadataHeaders } from "@evalp/kit";
import type { FastifyRequest } from "fastify";

/**
 * Call options of an upstream RPC made for a request: the request id and the acting principal
 * travel as metadata, so every service logs the same request id (docs/http.md); the request's
 * Idempotency-Key, when it holds one, so that the plane records its write under it
 * (docs/idempotency.md). The call may take UPSTREAM_TIMEOUT_MS, and never past the request's
 * deadline (REQUEST_TIMEOUT_MS from its start): no request outlives its key's lock.
 */
export function callOptions(request: FastifyRequest): {
  headers: Record<string, string>;
  timeoutMs?: number;
} {
  const principal = request.access?.principal;
  const participant = request.participant;
  const actor = principal
    ? { kind: principal.kind, id: principal.principalId }
    : participant
      ? { kind: "participant", id: participant.sessionId }
      : undefined;
  const headers = metadataHeaders({ requestId: request.id, actor, idempotency: request.idempotency?.plane });
  const deadline = request.deadline;
  if (!deadline) return { headers };
  return {
    headers,
    // Read as each call starts (a route may make several with one options object): what is left
    // of the request then. Past the deadline no call starts (connect rejects the call with this).
    get timeoutMs() {
      const left = deadline.at - Date.now();
      if (left <= 0)
        throw new AppError("upstream_timeout", "The request took longer than the gateway allows.");
      return Math.min(deadline.callMs, left);
    },
  };
}

import { metadataHeaders } from "@evalp/kit";
import type { FastifyRequest } from "fastify";

/**
 * Call options of an upstream RPC made for a request: the request id and the acting principal
 * travel as metadata, so every service logs the same request id (docs/http.md).
 */
export function callOptions(request: FastifyRequest): { headers: Record<string, string> } {
  const principal = request.access?.principal;
  const participant = request.participant;
  const actor = principal
    ? { kind: principal.kind, id: principal.principalId }
    : participant
      ? { kind: "participant", id: participant.sessionId }
      : undefined;
  return { headers: metadataHeaders({ requestId: request.id, actor }) };
}

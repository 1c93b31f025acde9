import type { FastifyInstance } from "fastify";

/** Request ids a client may choose (docs/http.md); anything else is replaced. */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** Keeps a well-formed incoming X-Request-Id, else returns null so a new one is generated. */
export function clientRequestId(header: string | string[] | undefined): string | null {
  return typeof header === "string" && CLIENT_REQUEST_ID.test(header) ? header : null;
}

/**
 * Every response carries X-Request-Id, and every request leaves one JSON log line with its
 * route, status, duration and principal — never its credentials or body.
 */
export function registerRequestLog(app: FastifyInstance): void {
  app.addHook("onSend", async (request, reply) => {
    reply.header("X-Request-Id", request.id);
  });
  app.addHook("onResponse", async (request, reply) => {
    const principal = request.access?.principal;
    request.log.info(
      {
        method: request.method,
        route: request.routeOptions.url ?? "unknown",
        status: reply.statusCode,
        duration_ms: Math.round(reply.elapsedTime * 10) / 10,
        principal_kind: principal?.kind ?? (request.participant ? "participant" : undefined),
        principal_id: principal?.principalId ?? request.participant?.sessionId,
      },
      "request",
    );
  });
}

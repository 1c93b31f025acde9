import type { FastifyInstance, FastifyRequest } from "fastify";
import type { WebSocket } from "ws";
import type { RouteAccess } from "../http/principal.js";

/**
 * Declares a realtime door: a WebSocket at `url` (GET), for the credential `auth` names. `check`
 * runs before the upgrade, so a credential whose session it refuses gets that HTTP error and no
 * socket; `open` then takes the socket. @fastify/websocket leaves the door out of the document
 * (a WebSocket has no JSON answer to describe): the operations that hand out its tokens describe it.
 */
export function socketDoor(
  app: FastifyInstance,
  url: string,
  auth: Extract<RouteAccess["auth"], "connection" | "agent">,
  check: (request: FastifyRequest) => Promise<unknown>,
  open: (socket: WebSocket, request: FastifyRequest) => void,
): void {
  app.get(
    url,
    {
      websocket: true,
      config: { access: { auth } },
      preHandler: async (request) => {
        await check(request);
      },
    },
    open,
  );
}

import { AppError } from "@evalp/kit";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { WebSocket } from "ws";
import type { RouteAccess } from "../admission/credentials.js";

/**
 * Declares a realtime door: a WebSocket at `url` (GET), for the credential `auth` names. `check`
 * runs before the upgrade, so a credential whose session it refuses gets that HTTP error and no
 * socket; `open` then takes the socket. A GET that asks for no upgrade gets the contract's 404
 * (there is no HTTP resource here). The door is left out of the OpenAPI document (a WebSocket has
 * no JSON answer to describe): `/asyncapi.json` describes its frames, and the operations that hand
 * out its tokens point there.
 */
export function socketDoor(
  app: FastifyInstance,
  url: string,
  auth: Extract<RouteAccess["auth"], "connection" | "agent">,
  check: (request: FastifyRequest) => Promise<unknown>,
  open: (socket: WebSocket, request: FastifyRequest) => void,
): void {
  app.route({
    method: "GET",
    url,
    schema: { hide: true },
    config: { access: { auth } },
    preHandler: async (request) => {
      await check(request);
    },
    handler: async () => {
      throw new AppError("not_found", "This is a WebSocket door: open it with an upgrade.", {
        resource: "route",
      });
    },
    wsHandler: open,
  });
}

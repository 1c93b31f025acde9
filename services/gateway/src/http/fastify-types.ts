import type { Server } from "node:http";
import type { IdempotencyMetadata } from "@evalp/kit";
import type { Access, ParticipantAccess, RouteAccess } from "./principal.js";

/** What the gateway's plugins attach to Fastify's request and route config. */
declare module "fastify" {
  interface FastifyInstance {
    /** The gateway's ops server (`/healthz`, `/readyz`, `/metrics`), listened on OPS_PORT by its runner. */
    ops: Server;
  }
  interface FastifyContextConfig {
    access?: RouteAccess;
  }
  interface FastifyRequest {
    /** Set by the auth plugin on operator routes. */
    access?: Access;
    /** Set by the auth plugin on participant and realtime routes. */
    participant?: ParticipantAccess;
    /** Set by the auth plugin on agent routes: the agent session its token is bound to. */
    agent?: ParticipantAccess;
    /** The credential as presented, for logout; never logged. */
    credential?: string;
    /**
     * Set by the idempotency plugin when this request holds a key's lock (`owner` is the lock's
     * token): what the planes are told of the key (`plane`), and `final` false once a plane
     * answered about the key itself rather than the request (nothing is stored then).
     */
    idempotency?: {
      recordKey: string;
      lockKey: string;
      owner: string;
      fingerprint: string;
      plane: IdempotencyMetadata;
      final?: boolean;
    };
    /**
     * When this request must be answered by (REQUEST_TIMEOUT_MS from its start), and how long one
     * upstream call may take at most (UPSTREAM_TIMEOUT_MS): `callOptions` gives each call the less.
     */
    deadline?: { at: number; callMs: number };
  }
}

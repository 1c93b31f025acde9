import { once } from "node:events";
import { PassThrough } from "node:stream";
import { AppError, grants } from "@evalp/kit";
import type { StreamEventsResponse } from "@evalp/proto/webhooks/v1/live_events";
import { Type } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import { resolveAccess, toPrincipal } from "../../admission/credentials.js";
import { EVENT_CATALOG, type EventType } from "../../events/catalog.js";
import { errorBody, toAppError } from "../../plugins/errors.js";
import type { SocketSlot } from "../../realtime/socket-slots.js";
import { callOptions } from "../../upstream.js";
import { StringEnum } from "../../validation/request-validator.js";
import type { RouteDeps } from "../deps.js";
import { route } from "../index.js";
import { type ENV_PREFIX, type EnvPath, environmentRef, ref } from "../wire.js";
import { READ, type WebhooksApi, WRITE } from "./index.js";

/** Every event type of the catalog, in its order: what a listener may filter on and `trigger` emits. */
export const CATALOG_TYPES = Object.keys(EVENT_CATALOG) as EventType[];

/** `event_types`: a comma-separated list of the catalog's types (no spaces), as a pattern. */
const TYPE_LIST = (() => {
  const one = `(${CATALOG_TYPES.map((type) => type.replaceAll(".", "\\.")).join("|")})`;
  return `^${one}(,${one})*$`;
})();

/** What a client is told to wait before reconnecting (the SSE `retry` field), in milliseconds. */
const RECONNECT_MS = 3_000;

/** One Server-Sent Events message: its fields, then the blank line that ends it. */
function sse(fields: Array<[string, string]>): string {
  return `${fields.map(([name, value]) => `${name}: ${value}`).join("\n")}\n\n`;
}

/** The SSE message of an event body: `id` and `event` from the body, `data` the body itself (one line). */
export function eventMessage(body: string): string {
  const event = JSON.parse(body) as { id?: unknown; type?: unknown };
  return sse([
    ["id", String(event.id)],
    ["event", String(event.type)],
    ["data", body],
  ]);
}

/** The SSE message that ends a stream: the contract's error body, as an `error` event. */
export function errorMessage(error: AppError, requestId: string): string {
  return sse([
    ["event", "error"],
    ["data", JSON.stringify(errorBody(error, requestId))],
  ]);
}

/**
 * `ENV/events/…`: an environment's events as they are published (Server-Sent Events, what
 * `evalp listen` reads), and sample events on request (`evalp trigger`).
 */
export function webhookEventRoutes(app: WebhooksApi<typeof ENV_PREFIX>, deps: RouteDeps): void {
  const live = deps.upstreams.webhooks.live;

  route(app, "triggerWebhookEvent", "POST /events/trigger", WRITE, {
    body: Type.Object(
      {
        type: StringEnum(CATALOG_TYPES, {
          description: "The event type whose sample (the document's example of its webhook) is emitted.",
        }),
      },
      { additionalProperties: false },
    ),
    answer: Type.Union(Object.values(EVENT_CATALOG).map((entry) => ref(entry.schema))),
    handler: async ({ request, reply, call }) => {
      const sample = EVENT_CATALOG[request.body.type].sample;
      const answer = await live.triggerEvent(
        { environment: environmentRef(request.params), type: sample.type, data: sample.data },
        call,
      );
      // The plane's bytes, as they are published and delivered.
      await reply.code(202).type("application/json; charset=utf-8").send(answer.body);
      return undefined;
    },
  });

  // The streams this gateway holds: ended before it closes, since its close waits for them.
  const open = new Set<AbortController>();
  app.addHook("preClose", async () => {
    for (const stream of open) stream.abort();
  });
  route(app, "streamWebhookEvents", "GET /events/stream", READ, {
    query: Type.Object({
      event_types: Type.Optional(
        Type.String({
          pattern: TYPE_LIST,
          description: "Only events of these types, comma-separated (no spaces); every type when absent.",
        }),
      ),
    }),
    media: "text/event-stream",
    handler: async ({ request, reply, call }) => {
      const access = request.access;
      if (!access) throw new AppError("unauthenticated", "Authentication required.");
      const types = request.query.event_types?.split(",") ?? [];
      const cancel = new AbortController();
      let events: AsyncIterator<StreamEventsResponse>;
      let slot: SocketSlot;
      try {
        events = live
          .streamEvents(
            { environment: environmentRef(request.params), eventTypes: [...new Set(types)] },
            // Open for as long as the client listens: no deadline.
            { headers: call.headers, timeoutMs: 0, signal: cancel.signal },
          )
          [Symbol.asyncIterator]();
        // The plane's first heartbeat says the stream is open; a refusal (404) comes instead. The
        // caps count only streams that may open, so a refused request takes no one's slot.
        await events.next();
        slot = await deps.eventStreams.claim(access.principal.principalId, request.ip);
      } catch (error) {
        cancel.abort();
        throw error;
      }
      deps.eventStreams.take(slot);
      open.add(cancel);
      const out = new PassThrough();
      reply.raw.on("close", () => cancel.abort());
      const recheck = credentialCheck(deps, request);
      // A client that reads slower than events come holds the relay back (and through it the
      // plane, which ends a stream that falls too far behind) rather than this process's memory.
      const send = async (text: string) => {
        if (!out.write(text)) await once(out, "drain", { signal: cancel.signal });
      };
      out.write(`retry: ${RECONNECT_MS}\n: open\n\n`);
      void (async () => {
        try {
          for (;;) {
            const next = await events.next();
            if (next.done) break;
            const { body } = next.value;
            if (body !== "") {
              await send(eventMessage(body));
              continue;
            }
            await send(": heartbeat\n\n");
            // A credential revoked (or a key's scope changed) since the stream opened ends it.
            const refused = await recheck();
            if (refused) {
              out.write(errorMessage(refused, request.id));
              break;
            }
          }
        } catch (error) {
          if (!cancel.signal.aborted) out.write(errorMessage(toAppError(error), request.id));
        } finally {
          cancel.abort();
          open.delete(cancel);
          out.end();
          await deps.eventStreams.release(slot);
        }
      })();
      reply
        .header("cache-control", "no-store")
        // Proxies that buffer answers (nginx) pass each message on as it comes.
        .header("x-accel-buffering", "no")
        .type("text/event-stream; charset=utf-8");
      return out;
    },
  });
}

/**
 * Asks control again who the stream's credential is: the refusal when it no longer authenticates
 * (401), no longer reaches the environment (404, 403) or has lost `webhooks:read` (403); null
 * when it still may listen, or when control cannot say now (the next heartbeat asks again).
 */
function credentialCheck(deps: RouteDeps, request: FastifyRequest<{ Params: EnvPath }>) {
  const credential = request.credential;
  const { headers } = callOptions(request);
  return async (): Promise<AppError | null> => {
    if (!credential) return null;
    try {
      const { principal } = await deps.upstreams.auth.authenticate({ credential }, { headers });
      if (!principal) return null;
      const access = resolveAccess(toPrincipal(principal), { ...request.params });
      return grants(access.scopes, "webhooks:read")
        ? null
        : new AppError("forbidden", "Requires the webhooks:read scope.", { required_scope: "webhooks:read" });
    } catch (error) {
      const refused = toAppError(error);
      return [401, 403, 404].includes(refused.status) ? refused : null;
    }
  };
}

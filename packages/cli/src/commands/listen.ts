import { setTimeout as sleep } from "node:timers/promises";
import { EvalpApiError, type operations, unwrap } from "@evalp/client";
import type { Command } from "commander";
import type { Context } from "../context.js";
import { CliError, usageError } from "../errors.js";
import { type Forwarded, forwardEvent, isSigningSecret, newSigningSecret } from "../forward.js";
import { envPath } from "../paths.js";
import type { Act } from "../program.js";
import { readEvents } from "../sse.js";

type EventType = operations["triggerWebhookEvent"]["requestBody"]["content"]["application/json"]["type"];

const EVENTS = "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/events";

/** The first wait before reconnecting after a drop, doubled after each failed try up to the last. */
const FIRST_RETRY_MS = 1_000;
const LAST_RETRY_MS = 30_000;
/** Why a stream may end that a reconnection can get past; any other reason stops `listen`. */
const PASSING = new Set(["unavailable", "upstream_timeout", "internal", "rate_limited"]);
/** Refusals no retry can change: the credential, its scope, the environment, the filter. */
const FATAL = new Set([400, 401, 403, 404, 422]);

/** The event types of `--events a,b` (repeatable), or none for every type. */
function eventTypes(value: string, previous: string[] | undefined): string[] {
  return [
    ...(previous ?? []),
    ...value
      .split(",")
      .map((type) => type.trim())
      .filter(Boolean),
  ];
}

/** One line per forwarded event: when, its type and id, and what the receiver answered. */
function forwardedLine(type: string, id: string, outcome: Forwarded): string {
  const answer = "status" in outcome ? `${outcome.status}` : `failed: ${outcome.error}`;
  return `${new Date().toISOString()}  ${type}  ${id}  -> ${answer}\n`;
}

/**
 * Reads the environment's event stream until it ends (a drop, or the server's `error` event)
 * and forwards each event. Answers when it ended; throws when it could not be opened.
 */
async function forwardStream(
  context: Context,
  options: { url: string; secret: string; types: string[] },
  opened: () => void,
): Promise<void> {
  const { data, error, response } = await context.api().GET(`${EVENTS}/stream`, {
    params: {
      path: envPath(context),
      query: options.types.length > 0 ? { event_types: options.types.join(",") } : {},
    },
    parseAs: "stream",
  });
  if (error !== undefined || !data) {
    throw EvalpApiError.fromResponse(response, error);
  }
  opened();
  for await (const message of readEvents(data)) {
    if (message.event === "error") {
      // The contract's error body: a credential revoked, or the platform going away.
      const refusal = EvalpApiError.fromResponse(
        new Response(null, { status: 500 }),
        JSON.parse(message.data),
      );
      // The platform going away, or falling behind, is worth a reconnection; a refusal is not.
      if (!PASSING.has(refusal.code)) throw new CliError(refusal.code, refusal.message);
      context.output.note(`The stream ended: ${refusal.message}`);
      return;
    }
    const id = message.id ?? "";
    const outcome = await forwardEvent(options.url, options.secret, id, message.data);
    context.runtime.streams.stdout(forwardedLine(message.event, id, outcome));
  }
}

/** `listen` (forward the environment's events to a local URL) and `trigger` (emit a sample event). */
export function registerListenCommands(program: Command, act: Act): void {
  program
    .command("listen")
    .description(
      "forward the environment's events, as they happen, to a local URL, signed as a webhook endpoint's deliveries are",
    )
    .requiredOption("--forward-to <url>", "where each event is POSTed (e.g. http://localhost:3000/webhooks)")
    .option(
      "--events <type...>",
      "only these event types (repeat it, or list several); all by default",
      eventTypes,
    )
    .option(
      "--secret <secret>",
      "sign with this whsec_… secret instead of a new one (to keep it across runs)",
    )
    .action(
      act(async (context, _args, options) => {
        const url = String(options.forwardTo);
        if (!URL.canParse(url)) throw usageError(`--forward-to is not a URL: ${url}`);
        const secret = typeof options.secret === "string" ? options.secret : newSigningSecret();
        if (!isSigningSecret(secret))
          throw usageError("--secret must be whsec_ and base64 of 24 to 64 bytes");
        const types = Array.isArray(options.events) ? options.events.map(String) : [];
        const { stdout } = context.runtime.streams;
        stdout(`Signing secret: ${secret}\n`);
        let wait = FIRST_RETRY_MS;
        let announced = false;
        for (;;) {
          try {
            await forwardStream(context, { url, secret, types }, () => {
              wait = FIRST_RETRY_MS;
              if (!announced) stdout(`Ready: forwarding events to ${url} (Ctrl-C to stop)\n`);
              else context.output.note("Reconnected.");
              announced = true;
            });
            context.output.note(`Connection lost; reconnecting in ${wait / 1000} s.`);
          } catch (error) {
            if (error instanceof EvalpApiError && FATAL.has(error.status)) throw error;
            if (error instanceof CliError && error.code !== "unavailable") throw error;
            const retryAfter = error instanceof EvalpApiError ? Number(error.retryAfter) * 1000 : 0;
            wait = Math.max(wait, Number.isFinite(retryAfter) ? retryAfter : 0);
            const reason = error instanceof Error ? error.message : String(error);
            context.output.note(`Cannot listen (${reason}); trying again in ${wait / 1000} s.`);
          }
          await sleep(wait);
          wait = Math.min(wait * 2, LAST_RETRY_MS);
        }
      }),
    );

  program
    .command("trigger")
    .description("emit a sample event of a type (the API document's example of it) in the environment")
    .argument("<event_type>", "an event type, e.g. subject.imported")
    .action(
      act(async (context, [type = ""]) => {
        const emitted = await unwrap(
          context.api().POST(`${EVENTS}/trigger`, {
            params: { path: envPath(context) },
            // The API checks the name (an unknown one is its 422, which lists the types).
            body: { type: type as EventType },
          }),
        );
        context.output.item(emitted, ["id", "type", "timestamp", "environment_id"]);
      }),
    );
}

import { type operations, type Schemas, unwrap } from "@evalp/client";
import { type Command, Option } from "commander";
import type { Context } from "../context.js";
import { pointInTime } from "../parse.js";
import { envPath } from "../paths.js";
import type { Act } from "../program.js";
import { type Column, fields } from "../table.js";
import { collect, limitOf, listLimit, pageSize } from "./list-options.js";

type Delivery = Schemas["WebhookDelivery"];
type EventTypes =
  operations["createWebhookEndpoint"]["requestBody"]["content"]["application/json"]["event_types"];

const ENDPOINT_COLUMNS: Column<Schemas["WebhookEndpoint"]>[] = fields(
  "id",
  "url",
  "enabled",
  "event_types",
  "created_at",
);
const DELIVERY_COLUMNS: Column<Delivery>[] = fields(
  "id",
  "event_type",
  "status",
  "attempt_count",
  "response_status",
  "last_error",
  "created_at",
);
const DELIVERY_FIELDS: (keyof Delivery)[] = [
  "id",
  "endpoint_id",
  "event_id",
  "event_type",
  "status",
  "attempt_count",
  "response_status",
  "last_error",
  "next_attempt_at",
  "delivered_at",
  "created_at",
];
const ATTEMPT_COLUMNS: Column<Schemas["WebhookDeliveryAttempt"]>[] = fields(
  "attempted_at",
  "response_status",
  "error",
  "duration_ms",
);
const DELIVERY_STATUSES = ["pending", "succeeded", "failed", "dead_letter"] as const;

const ENDPOINT = "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/webhooks";
const DELIVERIES =
  "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/webhook-deliveries";

/**
 * The command line with each `--url` written after `webhooks create` made its `--endpoint-url`:
 * the program's own `--url` (the API's address) is recognised anywhere on the line, and the
 * endpoint's URL is naturally written as `--url` too. A `--url` before the command stays the API's.
 */
export function endpointUrlFlags(argv: readonly string[]): string[] {
  const words = argv.map((arg, index) => ({ arg, index })).filter(({ arg }) => !arg.startsWith("-"));
  const at = words.findIndex(({ arg }, i) => arg === "webhooks" && words[i + 1]?.arg === "create");
  const create = at < 0 ? undefined : words[at + 1];
  if (!create) return [...argv];
  return argv.map((arg, index) => {
    if (index <= create.index) return arg;
    if (arg === "--url") return "--endpoint-url";
    return arg.startsWith("--url=") ? `--endpoint-url=${arg.slice("--url=".length)}` : arg;
  });
}

/** `webhooks` (an environment's endpoints) and `deliveries` (what was sent to them). */
export function registerWebhookCommands(program: Command, act: Act): void {
  const webhooks = program.command("webhooks").description("the environment's webhook endpoints");
  listLimit(webhooks.command("list").description("list the endpoints (never their secrets)")).action(
    act(async (context, _args, options) => {
      const limit = limitOf(options);
      const items = context
        .api()
        .paginate(ENDPOINT, { params: { path: envPath(context), query: pageSize(limit) } });
      context.output.list(await collect(items, limit), ENDPOINT_COLUMNS);
    }),
  );
  webhooks
    .command("create")
    .description("add an endpoint; its signing secret is shown this once")
    // `--url` after `webhooks create` is this option (`endpointUrlFlags`); before it, the API's.
    .requiredOption(
      "--endpoint-url <url>",
      "where the deliveries are POSTed (https); --url after the command",
    )
    .requiredOption(
      "--event-type <type...>",
      "an event type it receives (repeat it, or list several; * for all)",
      (value: string, previous: string[] | undefined) => [
        ...(previous ?? []),
        ...value
          .split(",")
          .map((type) => type.trim())
          .filter(Boolean),
      ],
    )
    .option("--secret <secret>", "its signing secret (whsec_…); by default the API makes one")
    .option("--disabled", "create it disabled: nothing is delivered until it is enabled")
    .action(
      act(async (context, _args, options) => {
        const created = await unwrap(
          context.api().POST(ENDPOINT, {
            params: { path: envPath(context) },
            body: {
              url: String(options.endpointUrl),
              // The API checks the names (an unknown one is its 422, which names it).
              event_types: options.eventType as EventTypes,
              ...(options.disabled === true && { enabled: false }),
              ...(typeof options.secret === "string" && { secret: options.secret }),
            },
          }),
        );
        // The API shows the secret in this answer only, and a receiver cannot verify without it.
        context.output.item(created, ["id", "url", "enabled", "event_types", "created_at", "secret"]);
        context.output.note("The secret is shown this once: give it to the receiver now.");
      }),
    );
  webhooks
    .command("test")
    .description("send the endpoint a webhook.test event, attempted at once")
    .argument("<endpoint_id>", "the endpoint's id")
    .action(
      act(async (context, [id = ""]) => {
        const delivery = await unwrap(context.api().POST(`${ENDPOINT}/{id}/test`, endpoint(context, id)));
        showDelivery(context, delivery);
      }),
    );
  webhooks
    .command("rotate")
    .description("give the endpoint a new signing secret (for 24 h deliveries are signed with both)")
    .argument("<endpoint_id>", "the endpoint's id")
    .action(
      act(async (context, [id = ""]) => {
        const rotated = await unwrap(
          context.api().POST(`${ENDPOINT}/{id}/rotate-secret`, endpoint(context, id)),
        );
        // The API shows the new secret in this answer only, and a receiver cannot verify without it.
        context.output.item(rotated, ["id", "url", "secret"]);
        context.output.note("The new secret is shown this once: give it to the receiver now.");
      }),
    );
  webhooks
    .command("recover")
    .description("re-queue the endpoint's failed and dead-letter deliveries created since a time")
    .argument("<endpoint_id>", "the endpoint's id")
    .requiredOption("--since <time>", "a date-time, or a span back from now (30m, 24h, 7d)", (value) =>
      pointInTime(value),
    )
    .option("--dry-run", "only count them")
    .action(
      act(async (context, [id = ""], options) => {
        const dryRun = options.dryRun === true;
        const recovered = await unwrap(
          context.api().POST(`${ENDPOINT}/{id}/recover`, {
            ...endpoint(context, id),
            body: { since: String(options.since), dry_run: dryRun },
          }),
        );
        if (context.output.json) {
          context.output.item(recovered, []);
          return;
        }
        context.output.item(recovered, ["count"]);
        context.output.note(
          dryRun ? "Dry run: nothing was re-queued." : "Re-queued: attempted again at once.",
        );
      }),
    );

  const deliveries = program.command("deliveries").description("the environment's webhook deliveries");
  listLimit(deliveries.command("list").description("list deliveries, newest first"))
    .addOption(new Option("--status <status>", "only those of this status").choices(DELIVERY_STATUSES))
    .option("--endpoint <endpoint_id>", "only those to this endpoint")
    .action(
      act(async (context, _args, options) => {
        const limit = limitOf(options);
        const query = {
          ...pageSize(limit),
          ...(typeof options.status === "string" && {
            status: options.status as (typeof DELIVERY_STATUSES)[number],
          }),
          ...(typeof options.endpoint === "string" && { endpoint_id: options.endpoint }),
        };
        const items = context.api().paginate(DELIVERIES, { params: { path: envPath(context), query } });
        context.output.list(await collect(items, limit), DELIVERY_COLUMNS);
      }),
    );
  deliveries
    .command("get")
    .description("show a delivery and its attempts")
    .argument("<delivery_id>", "the delivery's id")
    .action(
      act(async (context, [id = ""]) => {
        const got = await unwrap(context.api().GET(`${DELIVERIES}/{delivery_id}`, delivery(context, id)));
        if (context.output.json) {
          context.output.item(got, []);
          return;
        }
        showDelivery(context, got);
        context.output.list(got.attempts, ATTEMPT_COLUMNS);
      }),
    );
  deliveries
    .command("replay")
    .description("attempt a delivery again at once, whatever its status")
    .argument("<delivery_id>", "the delivery's id")
    .action(
      act(async (context, [id = ""]) => {
        const replayed = await unwrap(
          context.api().POST(`${DELIVERIES}/{delivery_id}/replay`, delivery(context, id)),
        );
        showDelivery(context, replayed);
      }),
    );
}

function endpoint(context: Context, id: string) {
  return { params: { path: { ...envPath(context), id } } };
}

function delivery(context: Context, id: string) {
  return { params: { path: { ...envPath(context), delivery_id: id } } };
}

function showDelivery(context: Context, body: Delivery): void {
  context.output.item(body, DELIVERY_FIELDS);
}

import { type Command, Option } from "commander";
import type { Context } from "../context.js";
import { pointInTime } from "../parse.js";
import { ENV, envPath } from "../paths.js";
import type { Act } from "../program.js";
import { type Column, fields } from "../table.js";
import { limitOf, listLimit } from "./list-options.js";

type Endpoint = {
  id: string;
  environment_id: string;
  url: string;
  enabled: boolean;
  event_types: string[];
  created_at: string;
  disabled_at?: string;
};
type Delivery = {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: string;
  attempt_count: number;
  created_at: string;
  delivered_at?: string;
  last_error?: string;
  next_attempt_at?: string;
  response_status?: number;
};
type Attempt = { attempted_at: string; response_status?: number; error?: string; duration_ms: number };

const ENDPOINT_COLUMNS: Column<Endpoint>[] = fields("id", "url", "enabled", "event_types", "created_at");
const DELIVERY_COLUMNS: Column<Delivery>[] = fields(
  "id",
  "event_type",
  "status",
  "attempt_count",
  "response_status",
  "last_error",
  "created_at",
);
const DELIVERY_FIELDS = [
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
] as const;
const ATTEMPT_COLUMNS: Column<Attempt>[] = fields("attempted_at", "response_status", "error", "duration_ms");
const DELIVERY_STATUSES = ["pending", "succeeded", "failed", "dead_letter"];

/** `webhooks` (an environment's endpoints) and `deliveries` (what was sent to them). */
export function registerWebhookCommands(program: Command, act: Act): void {
  const webhooks = program.command("webhooks").description("the environment's webhook endpoints");
  listLimit(webhooks.command("list").description("list the endpoints (never their secrets)")).action(
    act(async (context, _args, options) =>
      context.output.list(
        await context.api().list<Endpoint>(`${ENV}/webhooks`, { path: envPath(context) }, limitOf(options)),
        ENDPOINT_COLUMNS,
      ),
    ),
  );
  webhooks
    .command("test")
    .description("send the endpoint a webhook.test event, attempted at once")
    .argument("<endpoint_id>", "the endpoint's id")
    .action(
      act(async (context, [id = ""]) =>
        showDelivery(
          context,
          await context.api().post<Delivery>(`${ENV}/webhooks/{id}/test`, endpoint(context, id)),
        ),
      ),
    );
  webhooks
    .command("rotate")
    .description("give the endpoint a new signing secret (for 24 h deliveries are signed with both)")
    .argument("<endpoint_id>", "the endpoint's id")
    .action(
      act(async (context, [id = ""]) => {
        const rotated = await context
          .api()
          .post<Endpoint & { secret: string }>(`${ENV}/webhooks/{id}/rotate-secret`, endpoint(context, id));
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
        const body = { since: options.since, dry_run: options.dryRun === true };
        const recovered = await context
          .api()
          .post<{ count: number }>(`${ENV}/webhooks/{id}/recover`, endpoint(context, id), body);
        if (context.output.json) return context.output.item(recovered, []);
        context.output.note(
          options.dryRun
            ? `${recovered.count} deliveries would be re-queued.`
            : `${recovered.count} deliveries re-queued.`,
        );
      }),
    );

  const deliveries = program.command("deliveries").description("the environment's webhook deliveries");
  listLimit(deliveries.command("list").description("list deliveries, newest first"))
    .addOption(new Option("--status <status>", "only those of this status").choices(DELIVERY_STATUSES))
    .option("--endpoint <endpoint_id>", "only those to this endpoint")
    .action(
      act(async (context, _args, options) => {
        const query = {
          status: options.status as string | undefined,
          endpoint_id: options.endpoint as string | undefined,
        };
        const items = await context
          .api()
          .list<Delivery>(`${ENV}/webhook-deliveries`, { path: envPath(context), query }, limitOf(options));
        context.output.list(items, DELIVERY_COLUMNS);
      }),
    );
  deliveries
    .command("get")
    .description("show a delivery and its attempts")
    .argument("<delivery_id>", "the delivery's id")
    .action(
      act(async (context, [id = ""]) => {
        const got = await context
          .api()
          .get<Delivery & { attempts: Attempt[] }>(
            `${ENV}/webhook-deliveries/{delivery_id}`,
            delivery(context, id),
          );
        if (context.output.json) return context.output.item(got, []);
        showDelivery(context, got);
        context.output.list(got.attempts, ATTEMPT_COLUMNS);
      }),
    );
  deliveries
    .command("replay")
    .description("attempt a delivery again at once, whatever its status")
    .argument("<delivery_id>", "the delivery's id")
    .action(
      act(async (context, [id = ""]) =>
        showDelivery(
          context,
          await context
            .api()
            .post<Delivery>(`${ENV}/webhook-deliveries/{delivery_id}/replay`, delivery(context, id)),
        ),
      ),
    );
}

function endpoint(context: Context, id: string) {
  return { path: { ...envPath(context), id } };
}

function delivery(context: Context, id: string) {
  return { path: { ...envPath(context), delivery_id: id } };
}

function showDelivery(context: Context, body: Delivery): void {
  context.output.item(body, [...DELIVERY_FIELDS]);
}

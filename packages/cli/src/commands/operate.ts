import { type Schemas, unwrap } from "@evalp/client";
import { type Command, Option } from "commander";
import { usageError } from "../errors.js";
import type { Output } from "../output.js";
import { limitPair, positiveInteger } from "../parse.js";
import { appPath, envPath, orgPath } from "../paths.js";
import type { Act } from "../program.js";
import { type Column, fields } from "../table.js";
import { collect, limitOf, listLimit, pageSize } from "./list-options.js";

type Quotas = Schemas["EnvironmentQuotas"];
type Counter = { counter: string; limit: number; usage: number | undefined };

const COUNTER_COLUMNS: Column<Counter>[] = fields("counter", "limit", "usage");
const AUDIT_COLUMNS: Column<Schemas["AuditEvent"]>[] = fields(
  "created_at",
  "action",
  "resource_type",
  "resource_id",
  "actor_kind",
  "actor_id",
  "request_id",
);
const BUNDLE_STATUSES = ["draft", "validated", "published", "deprecated", "archived"] as const;

const QUOTAS = "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/quotas";
const BUNDLE = "/v1/organizations/{organization_id}/apps/{app_id}/bundles/{bundle_id}";

/** `quotas`, `bundles status` and `audit`: what an operator watches and adjusts. */
export function registerOperateCommands(program: Command, act: Act): void {
  const quotas = program.command("quotas").description("the environment's quota limits and usage");
  quotas
    .command("get")
    .description("show each limit, its usage and the revision a change must name")
    .action(
      act(async (context) => {
        const current = await unwrap(context.api().GET(QUOTAS, { params: { path: envPath(context) } }));
        showQuotas(context.output, current);
      }),
    );
  quotas
    .command("set")
    .description("change limits (the others are kept), at the current or the given revision")
    .requiredOption("--limit <name=value>", "a new limit, repeatable (webhook_endpoints=50)", limitPair)
    .option(
      "--expected-revision <n>",
      "refuse the change (409 revision_conflict) unless the quotas are still at this revision",
      positiveInteger,
    )
    .action(
      act(async (context, _args, options) => {
        const api = context.api();
        const params = { path: envPath(context) };
        const current = await unwrap(api.GET(QUOTAS, { params }));
        const changes = options.limit as Record<string, number>;
        const known = Object.keys(current.limits);
        const unknown = Object.keys(changes).filter((name) => !known.includes(name));
        if (unknown.length > 0)
          throw usageError(`unknown quota ${unknown.join(", ")} (known: ${known.join(", ")})`);
        // The API replaces all seven limits at once: the ones not named keep their current value.
        const body = {
          expected_revision: (options.expectedRevision as number | undefined) ?? current.revision,
          limits: { ...current.limits, ...changes },
        };
        showQuotas(context.output, await unwrap(api.PATCH(QUOTAS, { params, body })));
      }),
    );

  const bundles = program.command("bundles").description("the app's bundles");
  bundles
    .command("status")
    .description("show a bundle's status and publication, or move it to another status")
    .argument("<bundle_id>", "the bundle's id")
    .addOption(new Option("--set <status>", "move it to this status").choices(BUNDLE_STATUSES))
    .action(
      act(async (context, [id = ""], options) => {
        const params = { path: { ...appPath(context), bundle_id: id } };
        const status = options.set as (typeof BUNDLE_STATUSES)[number] | undefined;
        const bundle = await unwrap(
          status
            ? context.api().POST(`${BUNDLE}/status`, { params, body: { status } })
            : context.api().GET(BUNDLE, { params }),
        );
        context.output.item(bundle, [
          "id",
          "name",
          "revision",
          "status",
          "published_at",
          "fingerprint",
          "created_at",
        ]);
      }),
    );

  const audit = program.command("audit").description("the organization's audit trail");
  listLimit(audit.command("list").description("list audit events, newest first"))
    .option("--action <action>", "only this action (app.created, api_key.revoked…)")
    .option("--resource-type <type>", "only changes to this kind of resource (app, api_key…)")
    .action(
      act(async (context, _args, options) => {
        const limit = limitOf(options);
        const query = {
          ...pageSize(limit),
          ...(typeof options.action === "string" && { action: options.action }),
          ...(typeof options.resourceType === "string" && { resource_type: options.resourceType }),
        };
        const events = context.api().paginate("/v1/organizations/{organization_id}/audit-events", {
          params: { path: orgPath(context), query },
        });
        context.output.list(await collect(events, limit), AUDIT_COLUMNS);
      }),
    );
}

function showQuotas(output: Output, quotas: Quotas): void {
  if (output.json) {
    output.item(quotas, []);
    return;
  }
  output.item(quotas, ["environment_id", "revision"]);
  const usage: Record<string, number> = quotas.usage;
  const counters = Object.entries(quotas.limits).map(([counter, limit]) => ({
    counter,
    limit,
    usage: usage[counter],
  }));
  output.list(counters, COUNTER_COLUMNS);
}

import { type Command, Option } from "commander";
import { usageError } from "../errors.js";
import { limitPair, positiveInteger } from "../parse.js";
import { APP, appPath, ENV, envPath, ORG, orgPath } from "../paths.js";
import type { Act } from "../program.js";
import { type Column, fields } from "../table.js";
import { limitOf, listLimit } from "./list-options.js";

type Quotas = {
  environment_id: string;
  limits: Record<string, number>;
  usage: Record<string, number>;
  revision: number;
  schema_version: number;
};
type Bundle = {
  id: string;
  app_id: string;
  name: string;
  status: string;
  fingerprint: string;
  revision: number;
  created_at: string;
  published_at?: string;
};
type AuditEvent = {
  id: string;
  actor_kind: string;
  actor_id: string;
  action: string;
  resource_type: string;
  resource_id: string;
  request_id: string | null;
  created_at: string;
};
type Counter = { counter: string; limit: number; usage: number | undefined };

const COUNTER_COLUMNS: Column<Counter>[] = fields("counter", "limit", "usage");
const AUDIT_COLUMNS: Column<AuditEvent>[] = fields(
  "created_at",
  "action",
  "resource_type",
  "resource_id",
  "actor_kind",
  "actor_id",
  "request_id",
);
const BUNDLE_STATUSES = ["draft", "validated", "published", "deprecated", "archived"];

/** `quotas`, `bundles status` and `audit`: what an operator watches and adjusts. */
export function registerOperateCommands(program: Command, act: Act): void {
  const quotas = program.command("quotas").description("the environment's quota limits and usage");
  quotas
    .command("get")
    .description("show each limit, its usage and the revision a change must name")
    .action(
      act(async (context) =>
        showQuotas(
          context.output,
          await context.api().get<Quotas>(`${ENV}/quotas`, { path: envPath(context) }),
        ),
      ),
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
        const path = { path: envPath(context) };
        const current = await api.get<Quotas>(`${ENV}/quotas`, path);
        const changes = options.limit as Record<string, number>;
        const unknown = Object.keys(changes).filter((name) => !(name in current.limits));
        if (unknown.length > 0)
          throw usageError(
            `unknown quota ${unknown.join(", ")} (known: ${Object.keys(current.limits).join(", ")})`,
          );
        // The API replaces all seven limits at once; the ones not named keep their current value.
        const body = {
          expected_revision: (options.expectedRevision as number | undefined) ?? current.revision,
          limits: { ...current.limits, ...changes },
        };
        showQuotas(context.output, await api.patch<Quotas>(`${ENV}/quotas`, path, body));
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
        const path = { path: { ...appPath(context), bundle_id: id } };
        const bundle =
          typeof options.set === "string"
            ? await context
                .api()
                .post<Bundle>(`${APP}/bundles/{bundle_id}/status`, path, { status: options.set })
            : await context.api().get<Bundle>(`${APP}/bundles/{bundle_id}`, path);
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
    .option("--resource-type <type>", "only changes to this kind of resource")
    .action(
      act(async (context, _args, options) => {
        const query = {
          action: options.action as string | undefined,
          resource_type: options.resourceType as string | undefined,
        };
        const events = await context
          .api()
          .list<AuditEvent>(`${ORG}/audit-events`, { path: orgPath(context), query }, limitOf(options));
        context.output.list(events, AUDIT_COLUMNS);
      }),
    );
}

function showQuotas(output: import("../output.js").Output, quotas: Quotas): void {
  if (output.json) return output.item(quotas, []);
  output.item(quotas, ["environment_id", "revision"]);
  const counters = Object.entries(quotas.limits).map(([counter, limit]) => ({
    counter,
    limit,
    usage: quotas.usage[counter],
  }));
  output.list(counters, COUNTER_COLUMNS);
}

import { type operations, type Schemas, unwrap } from "@evalp/client";
import type { Command } from "commander";
import type { Context } from "../context.js";
import { scopeList } from "../parse.js";
import { appPath, envPath, orgPath } from "../paths.js";
import type { Act } from "../program.js";
import { type Column, fields } from "../table.js";
import { collect, limitOf, listLimit, pageSize } from "./list-options.js";

const APP_COLUMNS: Column<Schemas["App"]>[] = fields("id", "slug", "name", "created_at");
const ENV_COLUMNS: Column<Schemas["Environment"]>[] = fields("id", "slug", "name", "created_at");
const KEY_COLUMNS: Column<Schemas["ApiKey"]>[] = fields(
  "id",
  "name",
  "key_prefix",
  "scopes",
  "created_at",
  "revoked_at",
);

/** `apps`, `environments` and `keys`: the control plane's resources an operator sets up. */
export function registerControlCommands(program: Command, act: Act): void {
  const apps = program.command("apps").description("the organization's apps");
  listLimit(apps.command("list").description("list the organization's apps")).action(
    act(async (context, _args, options) => {
      const limit = limitOf(options);
      const items = context.api().paginate("/v1/organizations/{organization_id}/apps", {
        params: { path: orgPath(context), query: pageSize(limit) },
      });
      context.output.list(await collect(items, limit), APP_COLUMNS);
    }),
  );
  apps
    .command("create")
    .description("create an app")
    .requiredOption("--slug <slug>", "lower-case letters, digits and dashes")
    .requiredOption("--name <name>", "a display name")
    .option("--description <text>", "what the app is for")
    .action(
      act(async (context, _args, options) => {
        const created = await unwrap(
          context.api().POST("/v1/organizations/{organization_id}/apps", {
            params: { path: orgPath(context) },
            body: {
              slug: String(options.slug),
              name: String(options.name),
              ...(typeof options.description === "string" && { description: options.description }),
            },
          }),
        );
        showApp(context, created);
      }),
    );
  apps
    .command("get")
    .description("show an app (by default the one of --app / EVALP_APP)")
    .argument("[app_id]", "the app's id")
    .action(
      act(async (context, [appId]) => {
        const app = await unwrap(
          context.api().GET("/v1/organizations/{organization_id}/apps/{app_id}", {
            params: { path: appPath(context, appId) },
          }),
        );
        showApp(context, app);
      }),
    );

  const environments = program.command("environments").alias("envs").description("an app's environments");
  listLimit(environments.command("list").description("list the app's environments")).action(
    act(async (context, _args, options) => {
      const limit = limitOf(options);
      const items = context.api().paginate("/v1/organizations/{organization_id}/apps/{app_id}/environments", {
        params: { path: appPath(context), query: pageSize(limit) },
      });
      context.output.list(await collect(items, limit), ENV_COLUMNS);
    }),
  );
  environments
    .command("create")
    .description("create an environment (with its default quotas)")
    .requiredOption("--slug <slug>", "lower-case letters, digits and dashes")
    .requiredOption("--name <name>", "a display name")
    .action(
      act(async (context, _args, options) => {
        const created = await unwrap(
          context.api().POST("/v1/organizations/{organization_id}/apps/{app_id}/environments", {
            params: { path: appPath(context) },
            body: { slug: String(options.slug), name: String(options.name) },
          }),
        );
        context.output.item(created, ["id", "app_id", "slug", "name", "created_at"]);
      }),
    );

  const keys = program.command("keys").description("the environment's API keys");
  keys
    .command("create")
    .description("create an API key; its secret is shown this once")
    .requiredOption("--name <name>", "what the key is for")
    .requiredOption(
      "--scope <scopes>",
      "a scope, repeatable or comma-separated (webhooks:read,audit:read)",
      scopeList,
    )
    .action(
      act(async (context, _args, options) => {
        const created = await unwrap(
          context
            .api()
            .POST(
              "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/api-keys",
              {
                params: { path: envPath(context) },
                body: { name: String(options.name), scopes: options.scope as KeyScopes },
              },
            ),
        );
        context.output.item(created, ["id", "name", "key_prefix", "scopes", "created_at", "secret"]);
        context.output.note("The secret is shown this once: store it now.");
      }),
    );
  listLimit(keys.command("list").description("list the environment's keys (never their secrets)")).action(
    act(async (context, _args, options) => {
      const limit = limitOf(options);
      const items = context
        .api()
        .paginate(
          "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/api-keys",
          {
            params: { path: envPath(context), query: pageSize(limit) },
          },
        );
      context.output.list(await collect(items, limit), KEY_COLUMNS);
    }),
  );
  keys
    .command("revoke")
    .description("revoke a key: it is refused from then on")
    .argument("<key_id>", "the key's id")
    .action(
      act(async (context, [keyId = ""]) => {
        const revoked = await unwrap(
          context
            .api()
            .POST(
              "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/api-keys/{key_id}/revoke",
              { params: { path: { ...envPath(context), key_id: keyId } } },
            ),
        );
        context.output.item(revoked, ["id", "name", "key_prefix", "revoked_at"]);
      }),
    );
}

/** The scopes a key is created with; the names are the API's to check (an unknown one is its 422). */
type KeyScopes = operations["createApiKey"]["requestBody"]["content"]["application/json"]["scopes"];

function showApp(context: Context, app: Schemas["App"]): void {
  context.output.item(app, ["id", "slug", "name", "description", "organization_id", "created_at"]);
}

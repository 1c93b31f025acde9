import type { Command } from "commander";
import type { Context } from "../context.js";
import { scopeList } from "../parse.js";
import { APP, appPath, ENV, envPath, ORG, orgPath } from "../paths.js";
import type { Act } from "../program.js";
import { type Column, fields } from "../table.js";
import { limitOf, listLimit } from "./list-options.js";

type Application = {
  id: string;
  organization_id: string;
  slug: string;
  name: string;
  description?: string | null;
  created_at: string;
};
type Environment = { id: string; app_id: string; slug: string; name: string; created_at: string };
type ApiKey = {
  id: string;
  environment_id: string;
  name: string;
  key_prefix: string;
  scopes: string[];
  created_at: string;
  revoked_at: string | null;
};

const APP_COLUMNS: Column<Application>[] = fields("id", "slug", "name", "created_at");
const ENV_COLUMNS: Column<Environment>[] = fields("id", "slug", "name", "created_at");
const KEY_COLUMNS: Column<ApiKey>[] = fields(
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
    act(async (context, _args, options) =>
      context.output.list(
        await context.api().list<Application>(`${ORG}/apps`, { path: orgPath(context) }, limitOf(options)),
        APP_COLUMNS,
      ),
    ),
  );
  apps
    .command("create")
    .description("create an app")
    .requiredOption("--slug <slug>", "lower-case letters, digits and dashes")
    .requiredOption("--name <name>", "a display name")
    .option("--description <text>", "what the app is for")
    .action(
      act(async (context, _args, options) => {
        const body = { slug: options.slug, name: options.name, description: options.description };
        showApp(
          context,
          await context.api().post<Application>(`${ORG}/apps`, { path: orgPath(context) }, body),
        );
      }),
    );
  apps
    .command("get")
    .description("show an app (by default the one of --app / EVALP_APP)")
    .argument("[app_id]", "the app's id")
    .action(
      act(async (context, [appId]) =>
        showApp(context, await context.api().get<Application>(APP, { path: appPath(context, appId) })),
      ),
    );

  const environments = program.command("environments").alias("envs").description("an app's environments");
  listLimit(environments.command("list").description("list the app's environments")).action(
    act(async (context, _args, options) =>
      context.output.list(
        await context
          .api()
          .list<Environment>(`${APP}/environments`, { path: appPath(context) }, limitOf(options)),
        ENV_COLUMNS,
      ),
    ),
  );
  environments
    .command("create")
    .description("create an environment (with its default quotas)")
    .requiredOption("--slug <slug>", "lower-case letters, digits and dashes")
    .requiredOption("--name <name>", "a display name")
    .action(
      act(async (context, _args, options) => {
        const body = { slug: options.slug, name: options.name };
        const created = await context
          .api()
          .post<Environment>(`${APP}/environments`, { path: appPath(context) }, body);
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
        const body = { name: options.name, scopes: options.scope };
        const created = await context
          .api()
          .post<ApiKey & { secret: string }>(`${ENV}/api-keys`, { path: envPath(context) }, body);
        context.output.item(created, ["id", "name", "key_prefix", "scopes", "created_at", "secret"]);
        context.output.note("The secret is shown this once: store it now.");
      }),
    );
  listLimit(keys.command("list").description("list the environment's keys (never their secrets)")).action(
    act(async (context, _args, options) =>
      context.output.list(
        await context.api().list<ApiKey>(`${ENV}/api-keys`, { path: envPath(context) }, limitOf(options)),
        KEY_COLUMNS,
      ),
    ),
  );
  keys
    .command("revoke")
    .description("revoke a key: it is refused from then on")
    .argument("<key_id>", "the key's id")
    .action(
      act(async (context, [keyId = ""]) => {
        const revoked = await context
          .api()
          .post<ApiKey>(`${ENV}/api-keys/{key_id}/revoke`, { path: { ...envPath(context), key_id: keyId } });
        context.output.item(revoked, ["id", "name", "key_prefix", "revoked_at"]);
      }),
    );
}

function showApp(context: Context, app: Application): void {
  context.output.item(app, ["id", "slug", "name", "description", "organization_id", "created_at"]);
}

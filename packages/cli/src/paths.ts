import type { Context } from "./context.js";
import { requireIds } from "./settings.js";

// The path parameters of the ORG, APP and ENV routes (docs/endpoints.md), from --org/--app/--env and their
// defaults; a missing one is a usage error naming the flag that gives it.

export function orgPath(context: Context) {
  const { org } = requireIds(context.settings, "org");
  return { organization_id: org };
}

/** An app's route parameters; `app` (a command's argument) overrides the default app. */
export function appPath(context: Context, app?: string) {
  const ids = requireIds(app ? { ...context.settings, app } : context.settings, "org", "app");
  return { organization_id: ids.org, app_id: ids.app };
}

export function envPath(context: Context) {
  const ids = requireIds(context.settings, "org", "app", "env");
  return { organization_id: ids.org, app_id: ids.app, environment_id: ids.env };
}

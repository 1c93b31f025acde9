import type { Context } from "./context.js";
import { requireIds } from "./settings.js";

// The API's paths as its OpenAPI document names them (contract §5b's ORG, APP and ENV).
export const ORG = "/v1/organizations/{organization_id}";
export const APP = `${ORG}/apps/{app_id}`;
export const ENV = `${APP}/environments/{environment_id}`;

/** The path parameters of an organization's routes. */
export function orgPath(context: Context) {
  const { org } = requireIds(context.settings, "org");
  return { organization_id: org };
}

/** The path parameters of an app's routes. */
export function appPath(context: Context, app?: string) {
  const ids = requireIds(app ? { ...context.settings, app } : context.settings, "org", "app");
  return { organization_id: ids.org, app_id: ids.app };
}

/** The path parameters of an environment's routes. */
export function envPath(context: Context) {
  const ids = requireIds(context.settings, "org", "app", "env");
  return { organization_id: ids.org, app_id: ids.app, environment_id: ids.env };
}

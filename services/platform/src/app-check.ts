import type { HandlerContext } from "@connectrpc/connect";
import { forwardedCall, isUuid, notFound } from "@evalp/kit";
import type { AppRef } from "@evalp/proto/platform/v1/template";
import type { Deps } from "./deps.js";

/** Apps never move between organizations, so a confirmed pair stays true; bounded so it cannot grow without end. */
const CONFIRMED_LIMIT = 10_000;

/**
 * Checks with the control plane that the app belongs to the organization of the path (404
 * otherwise), remembering confirmed pairs so that most requests cost no extra call.
 */
export function createAppCheck(deps: Deps) {
  const confirmed = new Set<string>();
  return async function requireApp(app: AppRef | undefined, ctx: HandlerContext): Promise<AppRef> {
    if (!app || !isUuid(app.organizationId) || !isUuid(app.appId)) throw notFound("app");
    const key = `${app.organizationId}/${app.appId}`;
    if (confirmed.has(key)) return app;
    await deps.control.organizations.getApp(
      { organizationId: app.organizationId, appId: app.appId },
      forwardedCall(ctx),
    );
    if (confirmed.size >= CONFIRMED_LIMIT) confirmed.clear();
    confirmed.add(key);
    return app;
  };
}

export type RequireApp = ReturnType<typeof createAppCheck>;

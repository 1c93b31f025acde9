import type { HandlerContext } from "@connectrpc/connect";
import { isUuid, metadataHeaders, notFound, requestContext } from "@evalp/kit";
import type { EnvironmentRef } from "@evalp/proto/control/v1/api_key";
import type { ControlClients } from "./deps.js";

/** Environments never move between apps or organizations: a confirmed chain stays true. */
const CONFIRMED_LIMIT = 10_000;

/** The metadata of a call made on behalf of the request being served (its request id and actor). */
export function forwardedCall(ctx: HandlerContext) {
  const context = requestContext(ctx.values);
  return {
    headers: metadataHeaders({ requestId: context.requestId ?? "", actor: context.actor ?? undefined }),
  };
}

/**
 * Checks with the control plane that the path's organization → app → environment chain holds
 * (404 otherwise) before this plane serves rows of that environment, remembering confirmed
 * chains so that most requests cost no extra call. Rows are then always read by environment id,
 * so nothing of another environment is ever visible through this one.
 */
export function createEnvironmentScope(control: ControlClients) {
  const confirmed = new Set<string>();
  return async function requireEnvironment(
    ref: EnvironmentRef | undefined,
    ctx: HandlerContext,
  ): Promise<EnvironmentRef> {
    if (!ref || !isUuid(ref.organizationId) || !isUuid(ref.appId) || !isUuid(ref.environmentId)) {
      throw notFound("environment");
    }
    const key = `${ref.organizationId}/${ref.appId}/${ref.environmentId}`;
    if (confirmed.has(key)) return ref;
    await control.organizations.getEnvironment(
      {
        environment: {
          organizationId: ref.organizationId,
          appId: ref.appId,
          environmentId: ref.environmentId,
        },
      },
      forwardedCall(ctx),
    );
    if (confirmed.size >= CONFIRMED_LIMIT) confirmed.clear();
    confirmed.add(key);
    return ref;
  };
}

export type RequireEnvironment = ReturnType<typeof createEnvironmentScope>;

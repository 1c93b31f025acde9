import type { Client, HandlerContext } from "@connectrpc/connect";
import type { EnvironmentRef } from "@evalp/proto/control/v1/api_key";
import type { OrganizationService } from "@evalp/proto/control/v1/organization";
import { notFound } from "../core/errors.js";
import { isUuid } from "../core/ids.js";
import { forwardedCall } from "../rpc/request-context.js";

/** Confirmed chains kept at most; environments never move, so a confirmed chain stays true. */
const CONFIRMED_LIMIT = 10_000;

/**
 * For the planes that do not own environments: checks with the control plane that the path's
 * organization → app → environment chain holds (404 otherwise) before serving rows of that
 * environment, remembering confirmed chains so that most requests cost no extra call. Rows are
 * then always read by environment id, so nothing of another environment is visible through it.
 */
export function createEnvironmentCheck(organizations: Client<typeof OrganizationService>) {
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
    await organizations.getEnvironment(
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

/** Resolves a request's environment reference once its organization → app → environment chain holds. */
export type RequireEnvironment = ReturnType<typeof createEnvironmentCheck>;

import type { FastifyRequest } from "fastify";

/** Where an app's platform resources live (the APP prefix of the contract). */
export const APP_PREFIX = "/v1/organizations/:organization_id/apps/:app_id";

/** The path parameters of an APP route. */
export type AppPath = { organization_id: string; app_id: string };

/** The wire form of an APP path, which the platform checks against the control plane (404 otherwise). */
export function appRef(params: AppPath) {
  return { organizationId: params.organization_id, appId: params.app_id };
}

/** The bundle a path names, as the bundle RPCs take it. */
export function bundleRef(params: AppPath & { bundle_id: string }) {
  return { app: appRef(params), bundleId: params.bundle_id };
}

/** The template a path names, as the template RPCs take it. */
export function templateRef(params: AppPath & { template_id: string }) {
  return { app: appRef(params), templateId: params.template_id };
}

/** Who creates a platform resource: the acting user, when a user (not a key) acts. */
export function authoredBy(request: FastifyRequest) {
  return { createdByUserId: request.access?.principal.userId ?? undefined };
}

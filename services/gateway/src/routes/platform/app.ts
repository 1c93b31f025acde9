/** The path parameters of an APP route. */
export type AppPath = { organization_id: string; app_id: string };

/** The wire form of an APP path, which the platform checks against the control plane (404 otherwise). */
export function appRef(params: AppPath) {
  return { organizationId: params.organization_id, appId: params.app_id };
}

export const APP = "/v1/organizations/:organization_id/apps/:app_id";

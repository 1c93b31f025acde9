/** Where an environment's resources live (the ENV prefix of the contract). */
export const ENV_PREFIX = "/v1/organizations/:organization_id/apps/:app_id/environments/:environment_id";

/** The path parameters of an ENV route. */
export type EnvPath = { organization_id: string; app_id: string; environment_id: string };

/** The wire form of an ENV path, which services check link by link (404 when any does not hold). */
export function environmentRef(params: EnvPath) {
  return {
    organizationId: params.organization_id,
    appId: params.app_id,
    environmentId: params.environment_id,
  };
}

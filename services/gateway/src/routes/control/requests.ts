/** Where an organization's resources live (the ORG prefix of the contract). */
export const ORG_PREFIX = "/v1/organizations/:organization_id";

/** The path parameters of an ORG route. */
export type OrgPath = { organization_id: string };

/** The wire form of an ORG path, as the control plane's RPCs take it. */
export function organizationRef(params: OrgPath) {
  return { organizationId: params.organization_id };
}

import { type EnvPath, environmentRef } from "../environment.js";

/** Where an organization's resources live (the ORG prefix of the contract). */
export const ORG_PREFIX = "/v1/organizations/:organization_id";

/** The path parameters of an ORG route. */
export type OrgPath = { organization_id: string };

/** The wire form of an ORG path, as the control plane's RPCs take it. */
export function organizationRef(params: OrgPath) {
  return { organizationId: params.organization_id };
}

/** Path parameters of `ENV/subjects/:subject_id/…`. */
export type SubjectPath = EnvPath & { subject_id: string };

/** A subject as the control plane's RPCs name it: its environment's path and its id. */
export function subjectRef(params: SubjectPath) {
  return { environment: environmentRef(params), subjectId: params.subject_id };
}

/** The session a request's credential is (sessions only: the auth plugin verified it). */
export function sessionRef(request: { credential?: string }) {
  return { accessToken: request.credential ?? "" };
}

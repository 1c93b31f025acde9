import type { ConnectRouter } from "@connectrpc/connect";
import { callerTable } from "@evalp/kit";
import { ApiKeyService } from "@evalp/proto/control/v1/api_key";
import { AuditService } from "@evalp/proto/control/v1/audit";
import { AuthService } from "@evalp/proto/control/v1/auth";
import { MembershipService } from "@evalp/proto/control/v1/membership";
import { OrganizationService } from "@evalp/proto/control/v1/organization";
import { QuotaService } from "@evalp/proto/control/v1/quota";
import { SubjectService } from "@evalp/proto/control/v1/subject";
import type { Deps } from "./deps.js";
import { acceptInvitation } from "./rpc/accept-invitation.js";
import { authenticate } from "./rpc/authenticate.js";
import { completeSubjectErasure } from "./rpc/complete-subject-erasure.js";
import { confirmPasswordReset } from "./rpc/confirm-password-reset.js";
import { createApiKey } from "./rpc/create-api-key.js";
import { createApp } from "./rpc/create-app.js";
import { createEnvironment } from "./rpc/create-environment.js";
import { createMembership } from "./rpc/create-membership.js";
import { createOrganization } from "./rpc/create-organization.js";
import { createProgram } from "./rpc/create-program.js";
import { eraseSubject } from "./rpc/erase-subject.js";
import { getActiveOrganization } from "./rpc/get-active-organization.js";
import { getApp } from "./rpc/get-app.js";
import { getEnvironment } from "./rpc/get-environment.js";
import { getLimits } from "./rpc/get-limits.js";
import { getOrganization } from "./rpc/get-organization.js";
import { getProgram } from "./rpc/get-program.js";
import { getQuotas } from "./rpc/get-quotas.js";
import { getSubject } from "./rpc/get-subject.js";
import { getSubjectErasure } from "./rpc/get-subject-erasure.js";
import { importSubjects } from "./rpc/import-subjects.js";
import { listApiKeys } from "./rpc/list-api-keys.js";
import { listApps } from "./rpc/list-apps.js";
import { listAuditEvents } from "./rpc/list-audit-events.js";
import { listEnvironments } from "./rpc/list-environments.js";
import { listMemberships } from "./rpc/list-memberships.js";
import { listPrograms } from "./rpc/list-programs.js";
import { listSessionOrganizations } from "./rpc/list-session-organizations.js";
import { listSubjects } from "./rpc/list-subjects.js";
import { login } from "./rpc/login.js";
import { logout } from "./rpc/logout.js";
import { requestPasswordReset } from "./rpc/request-password-reset.js";
import { revokeApiKey } from "./rpc/revoke-api-key.js";
import { setActiveOrganization } from "./rpc/set-active-organization.js";
import { signup } from "./rpc/signup.js";
import { updateQuotas } from "./rpc/update-quotas.js";

/**
 * Who may call control's RPCs: the gateway every public one; each other plane only the reads it
 * makes on a request's behalf (the environment and its limits, subjects and programs). Nobody
 * but the gateway reaches credentials, API keys, memberships or quotas' updates.
 */
export const CALLERS = callerTable({
  gateway: [
    AuthService,
    OrganizationService,
    MembershipService,
    ApiKeyService,
    AuditService,
    QuotaService,
    // Every subject RPC but the planes' reports of their part of an erasure.
    SubjectService.method.importSubjects,
    SubjectService.method.getSubject,
    SubjectService.method.createProgram,
    SubjectService.method.listPrograms,
    SubjectService.method.getProgram,
    SubjectService.method.listSubjects,
    SubjectService.method.eraseSubject,
    SubjectService.method.getSubjectErasure,
  ],
  platform: [
    OrganizationService.method.getApp,
    OrganizationService.method.listEnvironments,
    SubjectService.method.getSubject,
    SubjectService.method.getProgram,
    SubjectService.method.completeSubjectErasure,
  ],
  interview: [
    OrganizationService.method.getEnvironment,
    QuotaService.method.getLimits,
    SubjectService.method.getSubject,
    SubjectService.method.getProgram,
    SubjectService.method.completeSubjectErasure,
  ],
  webhooks: [
    OrganizationService.method.getEnvironment,
    QuotaService.method.getLimits,
    SubjectService.method.completeSubjectErasure,
  ],
});

/** Every control-plane RPC, one file each under `rpc/`. */
export function routes(deps: Deps) {
  return (router: ConnectRouter) => {
    router.service(AuthService, {
      signup: signup(deps),
      login: login(deps),
      logout: logout(deps),
      authenticate: authenticate(deps),
      requestPasswordReset: requestPasswordReset(deps),
      confirmPasswordReset: confirmPasswordReset(deps),
      getActiveOrganization: getActiveOrganization(deps),
      setActiveOrganization: setActiveOrganization(deps),
      listSessionOrganizations: listSessionOrganizations(deps),
    });
    router.service(OrganizationService, {
      createOrganization: createOrganization(deps),
      getOrganization: getOrganization(deps),
      createApp: createApp(deps),
      listApps: listApps(deps),
      getApp: getApp(deps),
      createEnvironment: createEnvironment(deps),
      listEnvironments: listEnvironments(deps),
      getEnvironment: getEnvironment(deps),
    });
    router.service(MembershipService, {
      createMembership: createMembership(deps),
      listMemberships: listMemberships(deps),
      acceptInvitation: acceptInvitation(deps),
    });
    router.service(ApiKeyService, {
      createApiKey: createApiKey(deps),
      listApiKeys: listApiKeys(deps),
      revokeApiKey: revokeApiKey(deps),
    });
    router.service(AuditService, { listAuditEvents: listAuditEvents(deps) });
    router.service(QuotaService, {
      getQuotas: getQuotas(deps),
      updateQuotas: updateQuotas(deps),
      getLimits: getLimits(deps),
    });
    router.service(SubjectService, {
      importSubjects: importSubjects(deps),
      getSubject: getSubject(deps),
      createProgram: createProgram(deps),
      listPrograms: listPrograms(deps),
      getProgram: getProgram(deps),
      listSubjects: listSubjects(deps),
      eraseSubject: eraseSubject(deps),
      getSubjectErasure: getSubjectErasure(deps),
      completeSubjectErasure: completeSubjectErasure(deps),
    });
  };
}

import { type Client, createClient } from "@connectrpc/connect";
import { createConnectTransport, Http2SessionManager } from "@connectrpc/connect-node";
import type { Config } from "@evalp/kit";
import { HealthService } from "@evalp/proto/common/v1/health";
import { ApiKeyService } from "@evalp/proto/control/v1/api_key";
import { AuditService } from "@evalp/proto/control/v1/audit";
import { AuthService } from "@evalp/proto/control/v1/auth";
import { MembershipService } from "@evalp/proto/control/v1/membership";
import { OrganizationService } from "@evalp/proto/control/v1/organization";
import { QuotaService } from "@evalp/proto/control/v1/quota";
import { SubjectService } from "@evalp/proto/control/v1/subject";

/** The planes the gateway calls, by name. */
export const PLANES = ["control", "platform", "interview", "webhooks"] as const;
export type Plane = (typeof PLANES)[number];

/** Typed Connect clients of every upstream service, one HTTP/2 session pool per plane. */
export type Upstreams = {
  auth: Client<typeof AuthService>;
  organizations: Client<typeof OrganizationService>;
  apiKeys: Client<typeof ApiKeyService>;
  memberships: Client<typeof MembershipService>;
  audit: Client<typeof AuditService>;
  quotas: Client<typeof QuotaService>;
  subjects: Client<typeof SubjectService>;
  health: Record<Plane, Client<typeof HealthService>>;
  /** Closes every HTTP/2 session; in-flight calls fail. Called last at shutdown. */
  close(): void;
};

export function createUpstreams(
  config: Pick<Config, Uppercase<`${Plane}_url`> | "UPSTREAM_TIMEOUT_MS">,
): Upstreams {
  const urls: Record<Plane, string> = {
    control: config.CONTROL_URL,
    platform: config.PLATFORM_URL,
    interview: config.INTERVIEW_URL,
    webhooks: config.WEBHOOKS_URL,
  };
  const sessions: Http2SessionManager[] = [];
  const transports = Object.fromEntries(
    PLANES.map((plane) => {
      const sessionManager = new Http2SessionManager(urls[plane]);
      sessions.push(sessionManager);
      const transport = createConnectTransport({
        baseUrl: urls[plane],
        httpVersion: "2",
        sessionManager,
        defaultTimeoutMs: config.UPSTREAM_TIMEOUT_MS,
      });
      return [plane, transport];
    }),
  ) as Record<Plane, ReturnType<typeof createConnectTransport>>;
  return {
    auth: createClient(AuthService, transports.control),
    organizations: createClient(OrganizationService, transports.control),
    apiKeys: createClient(ApiKeyService, transports.control),
    memberships: createClient(MembershipService, transports.control),
    audit: createClient(AuditService, transports.control),
    quotas: createClient(QuotaService, transports.control),
    subjects: createClient(SubjectService, transports.control),
    health: Object.fromEntries(
      PLANES.map((plane) => [plane, createClient(HealthService, transports[plane])]),
    ) as Record<Plane, Client<typeof HealthService>>,
    close() {
      for (const session of sessions) session.abort();
    },
  };
}

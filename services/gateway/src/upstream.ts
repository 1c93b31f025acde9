import { type Client, createClient } from "@connectrpc/connect";
import { type Config, createServiceTransport, type Registry, serviceCaller } from "@evalp/kit";
import { HealthService } from "@evalp/proto/common/v1/health";
import { ApiKeyService } from "@evalp/proto/control/v1/api_key";
import { AuditService } from "@evalp/proto/control/v1/audit";
import { AuthService } from "@evalp/proto/control/v1/auth";
import { MembershipService } from "@evalp/proto/control/v1/membership";
import { OrganizationService } from "@evalp/proto/control/v1/organization";
import { QuotaService } from "@evalp/proto/control/v1/quota";
import { SubjectService } from "@evalp/proto/control/v1/subject";
import { AgentService } from "@evalp/proto/interview/v1/agent";
import { AnalyticsService } from "@evalp/proto/interview/v1/analytics";
import { EvaluationService } from "@evalp/proto/interview/v1/evaluation";
import { ParticipantService } from "@evalp/proto/interview/v1/participant";
import { SubjectExportService as InterviewExportService } from "@evalp/proto/interview/v1/subject_export";
import { BundleService } from "@evalp/proto/platform/v1/bundle";
import { ContinuousService } from "@evalp/proto/platform/v1/continuous";
import { SubjectExportService as PlatformExportService } from "@evalp/proto/platform/v1/subject_export";
import { TemplateService } from "@evalp/proto/platform/v1/template";
import { WebhookDeliveryService } from "@evalp/proto/webhooks/v1/delivery";
import { WebhookEndpointService } from "@evalp/proto/webhooks/v1/endpoint";
import { LiveEventService } from "@evalp/proto/webhooks/v1/live_events";
import { SubjectExportService as WebhooksExportService } from "@evalp/proto/webhooks/v1/subject_export";

/** The planes the gateway calls, by name. */
export const PLANES = ["control", "platform", "interview", "webhooks"] as const;
export type Plane = (typeof PLANES)[number];

type UpstreamConfig = Pick<
  Config,
  | "CONTROL_URL"
  | "PLATFORM_URL"
  | "INTERVIEW_URL"
  | "WEBHOOKS_URL"
  | "UPSTREAM_TIMEOUT_MS"
  | "SERVICE_KEY"
  | "SERVICE_PUBLIC_KEYS"
  | "developmentServiceKeys"
>;

/** Typed Connect clients of every upstream service, one HTTP/2 session pool per service. */
export type Upstreams = {
  auth: Client<typeof AuthService>;
  organizations: Client<typeof OrganizationService>;
  apiKeys: Client<typeof ApiKeyService>;
  memberships: Client<typeof MembershipService>;
  audit: Client<typeof AuditService>;
  quotas: Client<typeof QuotaService>;
  subjects: Client<typeof SubjectService>;
  platform: {
    templates: Client<typeof TemplateService>;
    bundles: Client<typeof BundleService>;
    continuous: Client<typeof ContinuousService>;
  };
  interview: {
    evaluations: Client<typeof EvaluationService>;
    participant: Client<typeof ParticipantService>;
    analytics: Client<typeof AnalyticsService>;
    agent: Client<typeof AgentService>;
  };
  webhooks: {
    endpoints: Client<typeof WebhookEndpointService>;
    deliveries: Client<typeof WebhookDeliveryService>;
    /** An environment's events as they are published (streamed), and sample events on request. */
    live: Client<typeof LiveEventService>;
  };
  health: Record<Plane, Client<typeof HealthService>>;
  /** What each plane keeps about a subject, streamed (docs/subjects.md#export). */
  subjectExports: {
    interview: Client<typeof InterviewExportService>;
    platform: Client<typeof PlatformExportService>;
    webhooks: Client<typeof WebhooksExportService>;
  };
};

/** The clients of every plane; their calls are counted in `metrics` when given. */
export function createUpstreams(config: UpstreamConfig, metrics?: Registry): Upstreams {
  const urls: Record<Plane, () => string> = {
    control: () => config.CONTROL_URL,
    platform: () => config.PLATFORM_URL,
    interview: () => config.INTERVIEW_URL,
    webhooks: () => config.WEBHOOKS_URL,
  };
  const caller = serviceCaller(config, "gateway", metrics);
  const transport = Object.fromEntries(
    PLANES.map((plane) => [
      plane,
      createServiceTransport(plane, urls[plane], config.UPSTREAM_TIMEOUT_MS, caller),
    ]),
  ) as Record<Plane, ReturnType<typeof createServiceTransport>>;
  return {
    auth: createClient(AuthService, transport.control),
    organizations: createClient(OrganizationService, transport.control),
    apiKeys: createClient(ApiKeyService, transport.control),
    memberships: createClient(MembershipService, transport.control),
    audit: createClient(AuditService, transport.control),
    quotas: createClient(QuotaService, transport.control),
    subjects: createClient(SubjectService, transport.control),
    platform: {
      templates: createClient(TemplateService, transport.platform),
      bundles: createClient(BundleService, transport.platform),
      continuous: createClient(ContinuousService, transport.platform),
    },
    interview: {
      evaluations: createClient(EvaluationService, transport.interview),
      participant: createClient(ParticipantService, transport.interview),
      analytics: createClient(AnalyticsService, transport.interview),
      agent: createClient(AgentService, transport.interview),
    },
    webhooks: {
      endpoints: createClient(WebhookEndpointService, transport.webhooks),
      deliveries: createClient(WebhookDeliveryService, transport.webhooks),
      live: createClient(LiveEventService, transport.webhooks),
    },
    health: Object.fromEntries(
      PLANES.map((plane) => [plane, createClient(HealthService, transport[plane])]),
    ) as Record<Plane, Client<typeof HealthService>>,
    subjectExports: {
      interview: createClient(InterviewExportService, transport.interview),
      platform: createClient(PlatformExportService, transport.platform),
      webhooks: createClient(WebhooksExportService, transport.webhooks),
    },
  };
}

import {
  AppError,
  type Config,
  metadataHeaders,
  planeClients,
  type Registry,
  serviceCaller,
} from "@evalp/kit";
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
import type { FastifyRequest } from "fastify";

// The planes' Connect clients, and the options each call made for a request carries (its id,
// caller, Idempotency-Key and deadline).

declare module "fastify" {
  interface FastifyRequest {
    /**
     * When this request must be answered by (REQUEST_TIMEOUT_MS from its start, set in app.ts), and
     * how long one upstream call may take at most (UPSTREAM_TIMEOUT_MS): `callOptions` gives each
     * call the less.
     */
    deadline?: { at: number; callMs: number };
  }
}

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

/**
 * Typed Connect clients of every upstream service, one HTTP/2 session pool per plane; their
 * calls are counted in `metrics` when given.
 */
export function createUpstreams(config: UpstreamConfig, metrics?: Registry) {
  const caller = serviceCaller(config, "gateway", metrics);
  const control = planeClients("control", config, caller);
  const platform = planeClients("platform", config, caller);
  const interview = planeClients("interview", config, caller);
  const webhooks = planeClients("webhooks", config, caller);
  return {
    auth: control(AuthService),
    organizations: control(OrganizationService),
    apiKeys: control(ApiKeyService),
    memberships: control(MembershipService),
    audit: control(AuditService),
    quotas: control(QuotaService),
    subjects: control(SubjectService),
    platform: {
      templates: platform(TemplateService),
      bundles: platform(BundleService),
      continuous: platform(ContinuousService),
    },
    interview: {
      evaluations: interview(EvaluationService),
      participant: interview(ParticipantService),
      analytics: interview(AnalyticsService),
      agent: interview(AgentService),
    },
    webhooks: {
      endpoints: webhooks(WebhookEndpointService),
      deliveries: webhooks(WebhookDeliveryService),
      live: webhooks(LiveEventService),
    },
    health: {
      control: control(HealthService),
      platform: platform(HealthService),
      interview: interview(HealthService),
      webhooks: webhooks(HealthService),
    },
    /** What each plane keeps about a subject, streamed (docs/subjects.md#export). */
    subjectExports: {
      interview: interview(InterviewExportService),
      platform: platform(PlatformExportService),
      webhooks: webhooks(WebhooksExportService),
    },
  };
}

export type Upstreams = ReturnType<typeof createUpstreams>;

/**
 * Call options of an upstream RPC made for a request: the request id and the acting principal
 * travel as metadata, so every service logs the same request id (docs/http.md); the request's
 * Idempotency-Key, when it holds one, so that the plane records its write under it
 * (docs/idempotency.md). The call may take UPSTREAM_TIMEOUT_MS, and never past the request's
 * deadline (REQUEST_TIMEOUT_MS from its start): no request outlives its key's lock.
 */
export function callOptions(request: FastifyRequest): {
  headers: Record<string, string>;
  timeoutMs?: number;
} {
  const principal = request.access?.principal;
  const participant = request.participant;
  const actor = principal
    ? { kind: principal.kind, id: principal.principalId }
    : participant
      ? { kind: "participant", id: participant.sessionId }
      : undefined;
  const headers = metadataHeaders({ requestId: request.id, actor, idempotency: request.idempotency?.plane });
  const deadline = request.deadline;
  if (!deadline) return { headers };
  return {
    headers,
    // Read as each call starts (a route may make several with one options object): what is left
    // of the request then. Past the deadline no call starts (connect rejects the call with this).
    get timeoutMs() {
      const left = deadline.at - Date.now();
      if (left <= 0)
        throw new AppError("upstream_timeout", "The request took longer than the gateway allows.");
      return Math.min(deadline.callMs, left);
    },
  };
}

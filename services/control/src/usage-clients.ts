import { createClient } from "@connectrpc/connect";
import { type Config, createServiceTransport, type Registry, serviceCaller } from "@evalp/kit";
import { UsageService } from "@evalp/proto/common/v1/usage";
import type { Deps } from "./deps.js";

/**
 * Clients of the planes that count usage control reports, at the addresses in `config`; their
 * calls are counted in `metrics` when given.
 */
export function createUsageClients(
  config: Pick<
    Config,
    | "INTERVIEW_URL"
    | "WEBHOOKS_URL"
    | "UPSTREAM_TIMEOUT_MS"
    | "SERVICE_KEY"
    | "SERVICE_PUBLIC_KEYS"
    | "developmentServiceKeys"
  >,
  metrics?: Registry,
): Deps["usage"] {
  const caller = serviceCaller(config, "control", metrics);
  return {
    interview: createClient(
      UsageService,
      createServiceTransport("interview", () => config.INTERVIEW_URL, config.UPSTREAM_TIMEOUT_MS, caller),
    ),
    webhooks: createClient(
      UsageService,
      createServiceTransport("webhooks", () => config.WEBHOOKS_URL, config.UPSTREAM_TIMEOUT_MS, caller),
    ),
  };
}

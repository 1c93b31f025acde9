import { createClient } from "@connectrpc/connect";
import { type Config, createServiceTransport, serviceCaller } from "@evalp/kit";
import { UsageService } from "@evalp/proto/common/v1/usage";
import type { Deps } from "./deps.js";

/** Clients of the planes that count usage control reports, at the addresses in `config`. */
export function createUsageClients(
  config: Pick<Config, "INTERVIEW_URL" | "WEBHOOKS_URL" | "UPSTREAM_TIMEOUT_MS" | "SERVICE_TOKEN_SECRETS">,
): Deps["usage"] {
  return {
    interview: createClient(
      UsageService,
      createServiceTransport(
        () => config.INTERVIEW_URL,
        config.UPSTREAM_TIMEOUT_MS,
        serviceCaller(config, "control"),
      ),
    ),
    webhooks: createClient(
      UsageService,
      createServiceTransport(
        () => config.WEBHOOKS_URL,
        config.UPSTREAM_TIMEOUT_MS,
        serviceCaller(config, "control"),
      ),
    ),
  };
}

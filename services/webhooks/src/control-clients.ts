import { createClient } from "@connectrpc/connect";
import { type Config, createServiceTransport, type Registry, serviceCaller } from "@evalp/kit";
import { OrganizationService } from "@evalp/proto/control/v1/organization";
import { QuotaService } from "@evalp/proto/control/v1/quota";
import { SubjectService } from "@evalp/proto/control/v1/subject";
import type { ControlClients } from "./deps.js";

/** Clients of the control plane at `CONTROL_URL`, sharing one HTTP/2 session; calls counted in `metrics`. */
export function createControlClients(
  config: Pick<
    Config,
    "CONTROL_URL" | "UPSTREAM_TIMEOUT_MS" | "SERVICE_KEY" | "SERVICE_PUBLIC_KEYS" | "developmentServiceKeys"
  >,
  metrics?: Registry,
): ControlClients {
  const transport = createServiceTransport(
    "control",
    () => config.CONTROL_URL,
    config.UPSTREAM_TIMEOUT_MS,
    serviceCaller(config, "webhooks", metrics),
  );
  return {
    organizations: createClient(OrganizationService, transport),
    quotas: createClient(QuotaService, transport),
    subjects: createClient(SubjectService, transport),
  };
}

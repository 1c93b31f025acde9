import { createClient } from "@connectrpc/connect";
import { type Config, createServiceTransport, type Registry, serviceCaller } from "@evalp/kit";
import { OrganizationService } from "@evalp/proto/control/v1/organization";
import { QuotaService } from "@evalp/proto/control/v1/quota";
import { SubjectService } from "@evalp/proto/control/v1/subject";
import { BundleService } from "@evalp/proto/platform/v1/bundle";
import type { ControlClients, PlatformClients } from "./deps.js";

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
    serviceCaller(config, "interview", metrics),
  );
  return {
    organizations: createClient(OrganizationService, transport),
    subjects: createClient(SubjectService, transport),
    quotas: createClient(QuotaService, transport),
  };
}

/** Clients of the platform plane at `PLATFORM_URL`; calls counted in `metrics` when given. */
export function createPlatformClients(
  config: Pick<
    Config,
    "PLATFORM_URL" | "UPSTREAM_TIMEOUT_MS" | "SERVICE_KEY" | "SERVICE_PUBLIC_KEYS" | "developmentServiceKeys"
  >,
  metrics?: Registry,
): PlatformClients {
  const transport = createServiceTransport(
    "platform",
    () => config.PLATFORM_URL,
    config.UPSTREAM_TIMEOUT_MS,
    serviceCaller(config, "interview", metrics),
  );
  return { bundles: createClient(BundleService, transport) };
}

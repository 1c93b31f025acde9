import { createClient } from "@connectrpc/connect";
import { type Config, createServiceTransport, type Registry, serviceCaller } from "@evalp/kit";
import { OrganizationService } from "@evalp/proto/control/v1/organization";
import { SubjectService } from "@evalp/proto/control/v1/subject";
import { WebhookDeliveryService } from "@evalp/proto/webhooks/v1/delivery";
import type { Deps } from "./deps.js";

/** The webhooks plane's deliveries at `WEBHOOKS_URL`; calls counted in `metrics` when given. */
export function createDeliveryClient(
  config: Pick<
    Config,
    "WEBHOOKS_URL" | "UPSTREAM_TIMEOUT_MS" | "SERVICE_KEY" | "SERVICE_PUBLIC_KEYS" | "developmentServiceKeys"
  >,
  metrics?: Registry,
): Deps["deliveries"] {
  return createClient(
    WebhookDeliveryService,
    createServiceTransport(
      "webhooks",
      () => config.WEBHOOKS_URL,
      config.UPSTREAM_TIMEOUT_MS,
      serviceCaller(config, "platform", metrics),
    ),
  );
}

/** Clients of the control plane at `CONTROL_URL`, sharing one HTTP/2 session; calls counted in `metrics`. */
export function createControlClients(
  config: Pick<
    Config,
    "CONTROL_URL" | "UPSTREAM_TIMEOUT_MS" | "SERVICE_KEY" | "SERVICE_PUBLIC_KEYS" | "developmentServiceKeys"
  >,
  metrics?: Registry,
): Deps["control"] {
  const transport = createServiceTransport(
    "control",
    () => config.CONTROL_URL,
    config.UPSTREAM_TIMEOUT_MS,
    serviceCaller(config, "platform", metrics),
  );
  return {
    organizations: createClient(OrganizationService, transport),
    subjects: createClient(SubjectService, transport),
  };
}

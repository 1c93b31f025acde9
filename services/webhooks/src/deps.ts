import type { Client } from "@connectrpc/connect";
import type { Config, Logger, Pool } from "@evalp/kit";
import type { OrganizationService } from "@evalp/proto/control/v1/organization";
import type { QuotaService } from "@evalp/proto/control/v1/quota";
import type { SubjectService } from "@evalp/proto/control/v1/subject";
import type { RequireEnvironmentId } from "./environment-id-check.js";
import type { LiveEvents } from "./live-events.js";
import type { SecretSealer } from "./sealed-secrets.js";
import type { Resolver } from "./ssrf.js";

/** The control plane, which owns environments and the limits of quotas. */
export type ControlClients = {
  organizations: Client<typeof OrganizationService>;
  quotas: Client<typeof QuotaService>;
  /** Where this plane reports its part of a subject's erasure done. */
  subjects: Client<typeof SubjectService>;
};

/** What every webhooks RPC is a function of. */
export type Deps = {
  pool: Pool;
  logger: Logger;
  config: Pick<Config, "WEBHOOK_ALLOW_PRIVATE">;
  control: ControlClients;
  /** Seals endpoint secrets for storage (WEBHOOK_SECRETS_KEYS). */
  sealer: SecretSealer;
  requireEnvironmentId: RequireEnvironmentId;
  /** The environment's events as they are published, for listeners (`evalp listen`). */
  live: LiveEvents;
  /** Tells this process's delivery worker that a delivery is due now (test, replay, recover). */
  wake: () => void;
  /** How target host names are resolved for the private-address check (tests replace it). */
  resolver?: Resolver;
};

import type { Client } from "@connectrpc/connect";
import type { Config, Logger, Pool } from "@evalp/kit";
import type { OrganizationService } from "@evalp/proto/control/v1/organization";
import type { SubjectService } from "@evalp/proto/control/v1/subject";
import type { WebhookDeliveryService } from "@evalp/proto/webhooks/v1/delivery";

/** What every platform RPC is a function of. */
export type Deps = {
  pool: Pool;
  logger: Logger;
  config: Pick<Config, "CONTROL_URL" | "WEBHOOKS_URL" | "UPSTREAM_TIMEOUT_MS" | "PREVIEW_INPUT_LIMIT_BYTES">;
  /** The control plane: apps and environments, subjects and programs belong to it. */
  control: { organizations: Client<typeof OrganizationService>; subjects: Client<typeof SubjectService> };
  /** The webhooks plane: a continuous answer may name one of its deliveries. */
  deliveries: Client<typeof WebhookDeliveryService>;
};

import type { Client } from "@connectrpc/connect";
import type { Config, Logger, Pool } from "@evalp/kit";
import type { OrganizationService } from "@evalp/proto/control/v1/organization";
import type { QuotaService } from "@evalp/proto/control/v1/quota";
import type { SubjectService } from "@evalp/proto/control/v1/subject";
import type { BundleService } from "@evalp/proto/platform/v1/bundle";
import type { Realtime } from "./realtime.js";

/** The control plane: environments, subjects and programs, and the limits of quotas. */
export type ControlClients = {
  organizations: Client<typeof OrganizationService>;
  subjects: Client<typeof SubjectService>;
  quotas: Client<typeof QuotaService>;
};

/** The platform plane: bundles and the contents an interview runs on. */
export type PlatformClients = { bundles: Client<typeof BundleService> };

/** What every interview RPC is a function of. */
export type Deps = {
  pool: Pool;
  logger: Logger;
  /** Read at each call: tests settle REALTIME_URL once the gateway listens. */
  config: Pick<Config, "JWT_SECRET" | "REALTIME_URL" | "AGENT_DISCONNECT_PAUSE_MS">;
  control: ControlClients;
  platform: PlatformClients;
  /** What the interview's open sockets are sent, whichever gateway holds them. */
  realtime: Realtime;
};

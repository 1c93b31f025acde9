import type { Client } from "@connectrpc/connect";
import type { Config, Logger, Pool } from "@evalp/kit";
import type { UsageService } from "@evalp/proto/common/v1/usage";
import type { BackgroundTasks } from "./background.js";
import type { Mailer } from "./mailer.js";

/** What every control RPC is a function of. */
export type Deps = {
  pool: Pool;
  config: Config;
  logger: Logger;
  mailer: Mailer;
  tasks: BackgroundTasks;
  /** The planes that own counted rows control does not: asked for usage when quotas are read. */
  usage: { interview: Client<typeof UsageService>; webhooks: Client<typeof UsageService> };
};

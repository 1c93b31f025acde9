import type { Config, Logger, Pool } from "@evalp/kit";
import type { BackgroundTasks } from "./background.js";
import type { Mailer } from "./mailer.js";

/** What every control RPC is a function of. */
export type Deps = { pool: Pool; config: Config; logger: Logger; mailer: Mailer; tasks: BackgroundTasks };

import type { Config, Logger, Pool } from "@evalp/kit";

/** What every control RPC is a function of. */
export type Deps = { pool: Pool; config: Config; logger: Logger };

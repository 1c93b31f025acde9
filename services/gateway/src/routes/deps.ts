import type { Config } from "@evalp/kit";
import type { CursorCodec } from "../http/cursor.js";
import type { AttemptLimiter } from "../plugins/attempt-limit.js";
import type { Upstreams } from "../upstream.js";

/** What route handlers are a function of. */
export type RouteDeps = {
  config: Pick<Config, "NODE_ENV" | "SIGNUP_ENABLED">;
  upstreams: Upstreams;
  cursors: CursorCodec;
  attempts: AttemptLimiter;
};

import type { HandlerContext } from "@connectrpc/connect";
import { createEnvironmentScope as createScope } from "@evalp/kit";
import type { EnvironmentRef } from "@evalp/proto/control/v1/api_key";
import type { ControlClients } from "./deps.js";

export { forwardedCall } from "@evalp/kit";

/** The kit's environment check; this plane's rows are keyed by the environment id it returns. */
export function createEnvironmentScope(control: ControlClients) {
  const requireEnvironment = createScope(control.organizations);
  return async (ref: EnvironmentRef | undefined, ctx: HandlerContext): Promise<string> =>
    (await requireEnvironment(ref, ctx)).environmentId;
}

export type RequireEnvironment = ReturnType<typeof createEnvironmentScope>;

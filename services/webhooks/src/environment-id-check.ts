import type { HandlerContext } from "@connectrpc/connect";
import { createEnvironmentCheck } from "@evalp/kit";
import type { EnvironmentRef } from "@evalp/proto/control/v1/api_key";
import type { ControlClients } from "./deps.js";

/** The kit's environment check, answering the environment id: this plane keys its rows by it alone. */
export function createEnvironmentIdCheck(control: ControlClients) {
  const requireEnvironment = createEnvironmentCheck(control.organizations);
  return async (ref: EnvironmentRef | undefined, ctx: HandlerContext): Promise<string> =>
    (await requireEnvironment(ref, ctx)).environmentId;
}

export type RequireEnvironmentId = ReturnType<typeof createEnvironmentIdCheck>;

import { createEnvironmentScope as createScope } from "@evalp/kit";
import type { ControlClients } from "./deps.js";

export { forwardedCall } from "@evalp/kit";

/** The kit's environment check (organization → app → environment, with the control plane). */
export function createEnvironmentScope(control: ControlClients) {
  return createScope(control.organizations);
}

export type RequireEnvironment = ReturnType<typeof createEnvironmentScope>;

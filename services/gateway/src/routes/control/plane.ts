import { type Plane, plane } from "../operations.js";
import { CONTROL_PROSE, type ControlOperationId } from "./prose.js";

/** The control plane's tag, and its operations' prose (prose.ts beside its routes). */
export const CONTROL: Plane<ControlOperationId> = plane("control", CONTROL_PROSE);

/** The auth routes (sign-up, log-in, password resets): the control plane's, under their own tag. */
export const AUTH: Plane<ControlOperationId> = { ...CONTROL, tag: "auth" };

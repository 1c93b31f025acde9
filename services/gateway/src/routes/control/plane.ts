import { type PlaneProse, plane } from "../operations.js";

/** The control plane's tag, and its operations' prose (operations.md beside its routes). */
export const CONTROL: PlaneProse = plane("control", new URL("./operations.md", import.meta.url));

/** The auth routes (sign-up, log-in, password resets): the control plane's, under their own tag. */
export const AUTH: PlaneProse = { ...CONTROL, tag: "auth" };

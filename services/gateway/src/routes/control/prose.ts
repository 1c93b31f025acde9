import { type PlaneProse, type Prose, plane } from "../route.js";
import prose from "./prose.json" with { type: "json" };

/** The control plane's operations, by operationId: each is one route of the plane. */
export type ControlOperationId = keyof typeof prose;

/**
 * What `/openapi.json` says of each of the control plane's operations (prose.json, by operationId):
 * its summary, its description and what each success status means. The routes beside this file
 * declare the rest: a route's `id` is one of these (the compiler refuses one without its prose),
 * and a unit test finds the route of each.
 */
export const CONTROL_PROSE = prose satisfies Record<ControlOperationId, Prose>;

/** The control plane's tag, and its operations' prose (above). */
export const CONTROL: PlaneProse<ControlOperationId> = plane("control", CONTROL_PROSE);

/** The auth routes (sign-up, log-in, password resets): the control plane's, under their own tag. */
export const AUTH: PlaneProse<ControlOperationId> = { ...CONTROL, tag: "auth" };

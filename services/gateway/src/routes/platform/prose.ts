import { type PlaneProse, type Prose, plane } from "../route.js";
import prose from "./prose.json" with { type: "json" };

/** The platform plane's operations, by operationId: each is one route of the plane. */
export type PlatformOperationId = keyof typeof prose;

/**
 * What `/openapi.json` says of each of the platform plane's operations (prose.json, by operationId):
 * its summary, its description and what each success status means. The routes beside this file
 * declare the rest: a route's `id` is one of these (the compiler refuses one without its prose),
 * and a unit test finds the route of each.
 */
export const PLATFORM_PROSE = prose satisfies Record<PlatformOperationId, Prose>;

/** The platform plane's tag, and its operations' prose (above). */
export const PLATFORM: PlaneProse<PlatformOperationId> = plane("platform", PLATFORM_PROSE);

import { type Api, plane } from "../index.js";
import prose from "./prose.json" with { type: "json" };
import { PLATFORM_SCHEMAS } from "./wire.js";

/**
 * The platform plane's tag, and what `/openapi.json` says of each of its operations (prose.json, by
 * operationId): its summary, its description and what each success status means. The routes
 * beside this file declare the rest: a route's operation is one of these (the compiler refuses one
 * without its prose), and a unit test finds the route of each.
 */
export const PLATFORM = plane("platform", prose, PLATFORM_SCHEMAS);

/** A plugin of the platform plane's routes under `Prefix` (`under`): its routes' operations are the plane's. */
export type PlatformApi<Prefix extends string> = Api<Prefix, keyof typeof prose>;

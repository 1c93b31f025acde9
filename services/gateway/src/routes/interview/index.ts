import { type Api, plane } from "../index.js";
import prose from "./prose.json" with { type: "json" };
import { INTERVIEW_SCHEMAS } from "./wire-schemas.js";

/**
 * The interview plane's tag, and what `/openapi.json` says of each of its operations (prose.json, by
 * operationId): its summary, its description and what each success status means. The routes
 * beside this file declare the rest: a route's operation is one of these (the compiler refuses one
 * without its prose), and a unit test finds the route of each.
 */
export const INTERVIEW = plane("interview", prose, INTERVIEW_SCHEMAS);

/** A plugin of the interview plane's routes under `Prefix` (`under`): its routes' operations are the plane's. */
export type InterviewApi<Prefix extends string> = Api<Prefix, keyof typeof prose>;

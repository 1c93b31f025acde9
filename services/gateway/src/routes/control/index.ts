import { type Api, plane } from "../index.js";
import prose from "./prose.json" with { type: "json" };
import { SubjectExport } from "./subject-export.js";
import { CONTROL_SCHEMAS } from "./wire.js";
import { SUBJECT_ERASURE_SCHEMAS } from "./wire-erasures.js";

/**
 * The control plane's tag, and what `/openapi.json` says of each of its operations (prose.json, by
 * operationId): its summary, its description and what each success status means. The routes
 * beside this file declare the rest: a route's operation is one of these (the compiler refuses one
 * without its prose), and a unit test finds the route of each.
 */
export const CONTROL = plane("control", prose, [
  ...CONTROL_SCHEMAS,
  ...SUBJECT_ERASURE_SCHEMAS,
  SubjectExport,
]);

/** A plugin of the control plane's routes under `Prefix` (`under`): its routes' operations are the plane's. */
export type ControlApi<Prefix extends string> = Api<Prefix, keyof typeof prose>;

/** The auth routes (sign-up, log-in, password resets): the control plane's, under their own tag. */
export const AUTH: typeof CONTROL = { ...CONTROL, tag: "auth" };

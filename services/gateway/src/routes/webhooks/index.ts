import { type Api, plane, reads, writes } from "../index.js";
import prose from "./prose.json" with { type: "json" };
import { WEBHOOK_SCHEMAS } from "./wire.js";

/**
 * The webhooks plane's tag, and what `/openapi.json` says of each of its operations (prose.json, by
 * operationId): its summary, its description and what each success status means. The routes
 * beside this file declare the rest: a route's operation is one of these (the compiler refuses one
 * without its prose), and a unit test finds the route of each.
 */
export const WEBHOOKS = plane("webhooks", prose, WEBHOOK_SCHEMAS);

/** A plugin of the webhooks plane's routes under `Prefix` (`under`): its routes' operations are the plane's. */
export type WebhooksApi<Prefix extends string> = Api<Prefix, keyof typeof prose>;

/** The webhooks plane's two scopes: each of its routes reads under the one or writes under the other. */
export const READ = reads("webhooks:read");
export const WRITE = writes("webhooks:write");

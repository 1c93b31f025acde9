import { type PlaneProse, type Prose, plane } from "../route.js";
import prose from "./prose.json" with { type: "json" };

/** The webhooks plane's operations, by operationId: each is one route of the plane. */
export type WebhooksOperationId = keyof typeof prose;

/**
 * What `/openapi.json` says of each of the webhooks plane's operations (prose.json, by operationId):
 * its summary, its description and what each success status means. The routes beside this file
 * declare the rest: a route's `id` is one of these (the compiler refuses one without its prose),
 * and a unit test finds the route of each.
 */
export const WEBHOOKS_PROSE = prose satisfies Record<WebhooksOperationId, Prose>;

/** The webhooks plane's tag, and its operations' prose (above). */
export const WEBHOOKS: PlaneProse<WebhooksOperationId> = plane("webhooks", WEBHOOKS_PROSE);

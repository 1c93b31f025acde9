import { type Plane, plane } from "../operations.js";
import { WEBHOOKS_PROSE, type WebhooksOperationId } from "./prose.js";

/** The webhooks plane's tag, and its operations' prose (prose.ts beside its routes). */
export const WEBHOOKS: Plane<WebhooksOperationId> = plane("webhooks", WEBHOOKS_PROSE);

import { type PlaneProse, plane } from "../operations.js";

/** The webhooks plane's tag, and its operations' prose (operations.md beside its routes). */
export const WEBHOOKS: PlaneProse = plane("webhooks", new URL("./operations.md", import.meta.url));

import { type PlaneProse, plane } from "../operations.js";

/** The platform plane's tag, and its operations' prose (operations.md beside its routes). */
export const PLATFORM: PlaneProse = plane("platform", new URL("./operations.md", import.meta.url));

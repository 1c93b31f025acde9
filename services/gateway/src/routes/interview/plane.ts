import { type PlaneProse, plane } from "../operations.js";

/** The interview plane's tag, and its operations' prose (operations.md beside its routes). */
export const INTERVIEW: PlaneProse = plane("interview", new URL("./operations.md", import.meta.url));

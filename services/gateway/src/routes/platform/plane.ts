import { type Plane, plane } from "../operations.js";
import { PLATFORM_PROSE, type PlatformOperationId } from "./prose.js";

/** The platform plane's tag, and its operations' prose (prose.ts beside its routes). */
export const PLATFORM: Plane<PlatformOperationId> = plane("platform", PLATFORM_PROSE);

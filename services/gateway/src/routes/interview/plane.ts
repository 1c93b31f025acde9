import { type Plane, plane } from "../operations.js";
import { INTERVIEW_PROSE, type InterviewOperationId } from "./prose.js";

/** The interview plane's tag, and its operations' prose (prose.ts beside its routes). */
export const INTERVIEW: Plane<InterviewOperationId> = plane("interview", INTERVIEW_PROSE);

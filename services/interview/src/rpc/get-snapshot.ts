import { create } from "@bufbuild/protobuf";
import {
  type GetSnapshotRequest,
  type GetSnapshotResponse,
  GetSnapshotResponseSchema,
} from "@evalp/proto/interview/v1/participant";
import { requireInterview } from "../db/interviews.js";
import type { Deps } from "../deps.js";
import { requireSession } from "../participant-scope.js";
import { snapshotOfRow } from "../steps.js";

/** The snapshot as it stands (404 before the start); the realtime door checks a session with it. */
export function getSnapshot(deps: Deps) {
  return async (req: GetSnapshotRequest): Promise<GetSnapshotResponse> => {
    const session = await requireSession(deps.pool, req.participant);
    const interview = await requireInterview(deps.pool, session.evaluation.id);
    return create(GetSnapshotResponseSchema, { interview: snapshotOfRow(interview) });
  };
}

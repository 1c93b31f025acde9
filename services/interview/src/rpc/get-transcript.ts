import { create } from "@bufbuild/protobuf";
import {
  type GetTranscriptRequest,
  type GetTranscriptResponse,
  GetTranscriptResponseSchema,
} from "@evalp/proto/interview/v1/participant";
import { listEntries } from "../db/entries.js";
import { findInterview } from "../db/interviews.js";
import { TRANSCRIPT_KINDS, transcriptMessage } from "../db/rows.js";
import type { Deps } from "../deps.js";
import { requireSession } from "../participant-scope.js";
import { DEFAULT_ENTRY_PAGE } from "./get-evaluation-interview.js";

/**
 * #16: the participant's transcript after `after_seq`, ascending: questions asked, answers and
 * utterances, each with the `seq` of its entry (the other entries are not shown, so a page's
 * numbers may skip). Empty before the start.
 */
export function getTranscript(deps: Deps) {
  return async (req: GetTranscriptRequest): Promise<GetTranscriptResponse> => {
    const session = await requireSession(deps.pool, req.participant);
    const interview = await findInterview(deps.pool, session.evaluation.id);
    const afterSeq = Number(req.afterSeq);
    const rows = interview
      ? await listEntries(
          deps.pool,
          interview.id,
          afterSeq,
          req.limit > 0 ? req.limit : DEFAULT_ENTRY_PAGE,
          TRANSCRIPT_KINDS,
        )
      : [];
    return create(GetTranscriptResponseSchema, {
      items: rows.map(transcriptMessage),
      nextAfterSeq: BigInt(rows.at(-1)?.seq ?? afterSeq),
    });
  };
}

import { create } from "@bufbuild/protobuf";
import type { TranscriptEntry } from "@evalp/proto/interview/v1/interview";
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
    return create(GetTranscriptResponseSchema, await transcriptPage(deps, interview?.id, req));
  };
}

/**
 * A page of an interview's transcript after `afterSeq` (questions asked, answers and utterances),
 * as the participant and the agent both read it; empty before the interview started.
 */
export async function transcriptPage(
  deps: Pick<Deps, "pool">,
  interviewId: string | undefined,
  page: { afterSeq: bigint; limit: number },
): Promise<{ items: TranscriptEntry[]; nextAfterSeq: bigint }> {
  const afterSeq = Number(page.afterSeq);
  const rows = interviewId
    ? await listEntries(
        deps.pool,
        interviewId,
        afterSeq,
        page.limit > 0 ? page.limit : DEFAULT_ENTRY_PAGE,
        TRANSCRIPT_KINDS,
      )
    : [];
  return { items: rows.map(transcriptMessage), nextAfterSeq: BigInt(rows.at(-1)?.seq ?? afterSeq) };
}

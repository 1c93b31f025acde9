import type { PageInfo, PageRequest } from "@evalp/proto/common/v1/page";
import type { FastifyRequest } from "fastify";
import type { CursorCodec } from "../../http/cursor.js";
import { pageBody, pageRequest } from "../../http/paging.js";

/** The list RPCs' answers: a page of messages and where the next one starts. */
type UpstreamPage<M> = { items: M[]; page?: PageInfo };

/**
 * A cursor list's answer (contract §5): the page the request's `limit` and `cursor` ask for,
 * fetched by `list`, its items mapped to the wire by `json`.
 */
export async function pageOf<M, J>(
  request: FastifyRequest & { query: { limit?: number; cursor?: string } },
  cursors: CursorCodec,
  list: (page: PageRequest) => Promise<UpstreamPage<M>>,
  json: (message: M) => J,
) {
  const answer = await list(pageRequest(request, cursors, request.query));
  return pageBody(request, cursors, answer.items.map(json), answer.page);
}

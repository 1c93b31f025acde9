import { create } from "@bufbuild/protobuf";
import { type PageInfo, type PageRequest, PageRequestSchema } from "@evalp/proto/common/v1/page";
import type { FastifyRequest } from "fastify";
import { RequestValidationError } from "../validation/json-body.js";
import type { CursorCodec } from "./cursor.js";

/** Default page size of cursor lists (docs/paging.md). */
export const DEFAULT_PAGE_SIZE = 50;

/** The list a cursor belongs to: the path it was issued on, so it cannot page another list. */
function listOf(request: FastifyRequest): string {
  return request.url.split("?")[0] ?? "";
}

/** The upstream page of a request's `limit` and `cursor` (already validated for shape). */
export function pageRequest(
  request: FastifyRequest,
  codec: CursorCodec,
  query: { limit?: number; cursor?: string },
): PageRequest {
  const limit = query.limit ?? DEFAULT_PAGE_SIZE;
  if (query.cursor === undefined) return create(PageRequestSchema, { limit });
  const after = codec.decode(listOf(request), query.cursor);
  if (!after) {
    const message = "cursor was not issued by this service for this list";
    throw new RequestValidationError([
      {
        type: "value_error",
        loc: ["query", "cursor"],
        msg: `Value error, ${message}`,
        input: query.cursor,
        ctx: { error: message },
      },
    ]);
  }
  return create(PageRequestSchema, { limit, after });
}

/** A page body `{items, next_cursor}` (docs/paging.md; null on the last page). */
export function pageBody<T>(
  request: FastifyRequest,
  codec: CursorCodec,
  items: T[],
  info: PageInfo | undefined,
) {
  return { items, next_cursor: codec.next(listOf(request), info) };
}

/** The list RPCs' answers: a page of messages and where the next one starts. */
export type UpstreamPage<M> = { items: M[]; page?: PageInfo };

/**
 * A list's `limit` and `cursor`, read from its query after validation (which checked their shape
 * against PageQuery): a list's query may carry filters of its own beside them.
 */
function pageQueryOf(query: unknown): { limit?: number; cursor?: string } {
  if (typeof query !== "object" || query === null) return {};
  const limit = "limit" in query && typeof query.limit === "number" ? query.limit : undefined;
  const cursor = "cursor" in query && typeof query.cursor === "string" ? query.cursor : undefined;
  return { limit, cursor };
}

/**
 * A cursor list's answer (docs/paging.md): the page the request's `limit` and `cursor` ask for,
 * fetched by `list`, its items mapped to the wire by `json`.
 */
export async function pageOf<M, J>(
  request: FastifyRequest,
  cursors: CursorCodec,
  list: (page: PageRequest) => Promise<UpstreamPage<M>>,
  json: (message: M) => J,
) {
  const answer = await list(pageRequest(request, cursors, pageQueryOf(request.query)));
  return pageBody(request, cursors, answer.items.map(json), answer.page);
}

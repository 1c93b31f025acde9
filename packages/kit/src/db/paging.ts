import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { PageInfo, PagePosition, PageRequest } from "@evalp/proto/common/v1/page";
import { PageInfoSchema, PagePositionSchema } from "@evalp/proto/common/v1/page";

/** A row that can be keyset-paged newest first. */
export type PagedRow = { id: string; created_at: Date };

/**
 * The SQL tail of a keyset page, newest first by (created_at, id). Keyset rather than offset
 * paging keeps pages stable while rows are inserted: an item never repeats or goes missing.
 * `nextParam` is the number of the first free `$n` placeholder; `alias` qualifies the columns
 * (`"m."`) when the query joins tables.
 */
export function pageClause(
  page: PageRequest | undefined,
  nextParam: number,
  alias = "",
): { where: string; tail: string; params: unknown[] } {
  const limit = page?.limit && page.limit > 0 ? page.limit : 50;
  const after = page?.after;
  if (after?.createdAt) {
    return {
      where: `(${alias}created_at, ${alias}id) < ($${nextParam}, $${nextParam + 1})`,
      tail: `ORDER BY ${alias}created_at DESC, ${alias}id DESC LIMIT $${nextParam + 2}`,
      params: [timestampDate(after.createdAt), after.id, limit + 1],
    };
  }
  return {
    where: "TRUE",
    tail: `ORDER BY created_at DESC, id DESC LIMIT $${nextParam}`,
    params: [limit + 1],
  };
}

/** Cuts the extra row a page query fetched and says where the next page starts. */
export function pageResult<T extends PagedRow>(
  rows: T[],
  page: PageRequest | undefined,
): { rows: T[]; info: PageInfo } {
  const limit = page?.limit && page.limit > 0 ? page.limit : 50;
  if (rows.length <= limit) return { rows, info: create(PageInfoSchema, {}) };
  const kept = rows.slice(0, limit);
  const last = kept[kept.length - 1] as T;
  const next: PagePosition = create(PagePositionSchema, {
    createdAt: timestampFromDate(last.created_at),
    id: last.id,
  });
  return { rows: kept, info: create(PageInfoSchema, { next }) };
}

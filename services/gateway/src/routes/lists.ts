import { type TObject, type TProperties, Type } from "@sinclair/typebox";
import { Page, PageQuery } from "./schemas.js";

/**
 * The parts of a cursor list's route (docs/paging.md), which answers with `pageOf` (http/paging.ts):
 * its query is the page's `limit` and `cursor` with the list's own filters after them, each an
 * optional query parameter.
 */
export function pageQuery<F extends TProperties>(filters: F) {
  return Type.Object({ ...PageQuery.properties, ...filters });
}

/** A cursor list's answer: a page of `item`, named after it (`App`: `AppPage`). */
export function pageOfItems<T extends TObject>(item: T) {
  return Page(item, `${item.$id}Page`);
}

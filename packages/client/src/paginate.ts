import type { Client, FetchOptions, MethodResponse } from "openapi-fetch";
import type { PathsWithMethod } from "openapi-typescript-helpers";
import { unwrap } from "./errors.js";
import type { paths } from "./types.js";

type GetPath = PathsWithMethod<paths, "get">;
type GetData<Path extends GetPath> = MethodResponse<Client<paths>, "get", Path>;

/** The list endpoints that page with a cursor (docs/paging.md): `{items, next_cursor}`. */
export type PagedPath = {
  [Path in GetPath]: GetData<Path> extends { items: unknown[]; next_cursor: string | null } ? Path : never;
}[GetPath];

/** The item type of a paged list. */
export type PageItem<Path extends PagedPath> = GetData<Path> extends { items: (infer Item)[] } ? Item : never;

/** The options of a paged list's GET (`params.path`, `params.query` without `cursor`, …). */
export type PageInit<Path extends PagedPath> = FetchOptions<paths[Path]["get"]>;

/**
 * Every item of a cursor list, page after page, newest first: each page is asked for with the
 * previous one's `next_cursor` until it is null. A refusal is thrown as an `EvalpApiError`.
 */
export async function* paginate<Path extends PagedPath>(
  client: Client<paths>,
  path: Path,
  init: PageInit<Path>,
): AsyncGenerator<PageItem<Path>, void, undefined> {
  const params = (init as { params?: { query?: Record<string, unknown> } }).params;
  let cursor: string | null = null;
  do {
    const query = cursor === null ? params?.query : { ...params?.query, cursor };
    // The path is one of `paths`' GETs; its options are the caller's with the cursor added.
    const get = client.GET as (path: string, init: unknown) => ReturnType<Client<paths>["GET"]>;
    // `unknown` first: the union of every GET's answer holds non-JSON ones (a guide's markdown).
    const page = (await unwrap(get(path, { ...init, params: { ...params, query } }))) as unknown as {
      items: PageItem<Path>[];
      next_cursor: string | null;
    };
    yield* page.items;
    cursor = page.next_cursor;
  } while (cursor !== null);
}

import type { Scope } from "@evalp/kit";
import type { PageRequest } from "@evalp/proto/common/v1/page";
import type { Static, TSchema } from "@sinclair/typebox";
import type { CursorCodec } from "../http/cursor.js";
import { pageOf, type UpstreamPage } from "../http/paging.js";
import type { Plane } from "./operations.js";
import { type Api, type At, type FullPath, type PathParams, type RouteContext, route } from "./route.js";
import { PageQuery } from "./schemas.js";

/** An operator's read under `scope`. */
export const reads = (scope: Scope) => ({ auth: "operator", scope }) as const;

/** An operator's write under `scope`: it takes an Idempotency-Key (docs/idempotency.md). */
export const writes = (scope: Scope) => ({ auth: "operator", scope, idempotency: "required" }) as const;

/** A page envelope's schema (`Page(item, name)`), whose items a list's `json` gives. */
type PageSchema = TSchema & { static: { items: unknown[] } };

/** What a list route is given of its request: typed by its path and its query. */
type ListRequest<Prefix extends string, Where extends At> = RouteContext<
  PathParams<FullPath<Prefix, Where>>,
  typeof PageQuery,
  TSchema
>["request"];

/**
 * A cursor list (docs/paging.md): a read of one scope, answered by one list RPC whose items are
 * mapped to the wire one by one. Its query is the page's (a list with filters of its own declares
 * its route itself).
 */
export type ListSpec<Prefix extends string, Where extends At, R extends PageSchema, M> = {
  scope: Scope;
  page: R;
  rpc: (
    request: ListRequest<Prefix, Where>,
    page: PageRequest,
    call: RouteContext<TSchema, TSchema, TSchema>["call"],
  ) => Promise<UpstreamPage<M>>;
  json: (message: M) => Static<R>["items"][number];
};

/**
 * The routes of a plane's plugin that follow one pattern each, declared in a line or three: a
 * list is its operation, its place, its scope, its RPC and its item's wire form.
 */
export function resources<Prefix extends string>(app: Api<Prefix>, plane: Plane, cursors: CursorCodec) {
  return {
    list<Where extends At, R extends PageSchema, M>(
      operationId: string,
      at: Where,
      spec: ListSpec<Prefix, Where, R, M>,
    ): void {
      // The page is typed by `json`, which gives its items: the envelope is built here, alike for all.
      route<Prefix, Where, typeof PageQuery, TSchema, TSchema>(app, plane, operationId, at, {
        access: reads(spec.scope),
        querystring: PageQuery,
        response: spec.page,
        handler: ({ request, call }) =>
          pageOf(request, cursors, (page) => spec.rpc(request, page, call), spec.json),
      });
    },
  };
}

import type { Scope } from "@evalp/kit";
import type { PageRequest } from "@evalp/proto/common/v1/page";
import type { TObject, TSchema } from "@sinclair/typebox";
import type { CursorCodec } from "../http/cursor.js";
import { pageOf, type UpstreamPage } from "../http/paging.js";
import type { Plane } from "./operations.js";
import { type Api, type At, type FullPath, type PathParams, type RouteContext, route } from "./route.js";
import { Page, PageQuery } from "./schemas.js";
import { wireOf } from "./wire.js";

/** An operator's read under `scope`. */
export const reads = (scope: Scope) => ({ auth: "operator", scope }) as const;

/** An operator's write under `scope`: it takes an Idempotency-Key (docs/idempotency.md). */
export const writes = (scope: Scope) => ({ auth: "operator", scope, idempotency: "required" }) as const;

/** What a list's RPC is given of its request: typed by its path and its query. */
type ListRequest<Prefix extends string, Where extends At> = RouteContext<
  PathParams<FullPath<Prefix, Where>>,
  typeof PageQuery,
  TSchema
>["request"];

/**
 * The routes of a plane's plugin that follow one pattern each, declared in a line or three.
 *
 * A cursor list (docs/paging.md) is a read of one scope, answered by one list RPC whose items are
 * put on the wire one by one by their schema's wire form; its page is named after its item
 * (`App`: `AppPage`) and its query is the page's (a list with filters of its own, or whose items
 * are mapped otherwise, declares its route itself).
 */
export function resources<Prefix extends string>(app: Api<Prefix>, plane: Plane, cursors: CursorCodec) {
  return {
    list<Where extends At, T extends TObject, M extends object>(
      operationId: string,
      at: Where,
      scope: Scope,
      item: T,
      rpc: (
        request: ListRequest<Prefix, Where>,
        page: PageRequest,
        call: RouteContext<TSchema, TSchema, TSchema>["call"],
      ) => Promise<UpstreamPage<M>>,
    ): void {
      const json = wireOf(item);
      route(app, plane, operationId, at, {
        access: reads(scope),
        querystring: PageQuery,
        response: Page(item, `${item.$id}Page`),
        handler: ({ request, call }) => pageOf(request, cursors, (page) => rpc(request, page, call), json),
      });
    },
  };
}

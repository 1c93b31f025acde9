import type { Scope } from "@evalp/kit";
import type { PageRequest } from "@evalp/proto/common/v1/page";
import { type Static, type TObject, type TProperties, type TSchema, Type } from "@sinclair/typebox";
import type { CursorCodec } from "../http/cursor.js";
import { pageOf, type UpstreamPage } from "../http/paging.js";
import type { PlaneProse } from "./operations.js";
import { type Api, type At, type FullPath, type PathParams, type RouteContext, route } from "./route.js";
import { Page, PageQuery, ref } from "./schemas.js";
import { wireOf } from "./wire.js";

/** An operator's read under `scope` (a list: any one of them). */
export const reads = (scope: Scope | readonly Scope[]) => ({ auth: "operator", scope }) as const;

/** An operator's write under `scope`: it takes an Idempotency-Key (docs/idempotency.md). */
export const writes = (scope: Scope) => ({ auth: "operator", scope, idempotency: "required" }) as const;

/** A list's query: the page's `limit` and `cursor`, and the list's own filters after them. */
function pageQueryWith<F extends TProperties>(filters: F) {
  return Type.Object({ ...PageQuery.properties, ...filters });
}

/** What a list's RPC is given of its request: typed by its path and its query (with `F`, filters). */
type ListRequest<
  Prefix extends string,
  Where extends At,
  F extends TProperties = Record<never, never>,
> = RouteContext<
  PathParams<FullPath<Prefix, Where>>,
  ReturnType<typeof pageQueryWith<F>>,
  TSchema
>["request"];

/** What a route's RPC is given of its request: typed by its path. */
type PathRequest<Prefix extends string, Where extends At> = RouteContext<
  PathParams<FullPath<Prefix, Where>>,
  TSchema,
  TSchema
>["request"];

/** A list's RPC: the page its request asks for, fetched upstream. */
type ListRpc<Request, M> = (
  request: Request,
  page: PageRequest,
  call: RouteContext<TSchema, TSchema, TSchema>["call"],
) => Promise<UpstreamPage<M>>;

/**
 * The routes of a plane's plugin that follow one pattern each, declared in a line or three.
 *
 * A read of one resource is one RPC, its answer put on the wire by `json`. A cursor list
 * (docs/paging.md) is a read of one scope, answered by one list RPC; its page is named after its
 * item (`App`: `AppPage`); a plain list's query is the page's and its items are put on the wire by
 * their schema's wire form, a filtered list's query has its filters beside the page's and its
 * items are mapped by its own `json`.
 */
export function resources<Prefix extends string>(app: Api<Prefix>, plane: PlaneProse, cursors: CursorCodec) {
  /** The route of a cursor list whose query is `limit`, `cursor` and `filters`. */
  function cursorList<Where extends At, F extends TProperties, M>(
    operationId: string,
    at: Where,
    scope: Scope,
    item: TObject,
    filters: F,
    rpc: ListRpc<ListRequest<Prefix, Where, F>, M>,
    json: (message: M) => Record<string, unknown>,
  ): void {
    route(app, plane, operationId, at, {
      access: reads(scope),
      querystring: pageQueryWith(filters),
      response: Page(item, `${item.$id}Page`),
      handler: ({ request, call }) => pageOf(request, cursors, (page) => rpc(request, page, call), json),
    });
  }

  return {
    /**
     * A read of one resource under `scope`: one RPC, whose answer `json` puts on the wire as
     * `response` (a named schema, referred to in the document).
     */
    read<Where extends At, R extends TSchema, A>(
      operationId: string,
      at: Where,
      scope: Scope | readonly Scope[],
      response: R,
      answer: {
        rpc: (
          request: PathRequest<Prefix, Where>,
          call: RouteContext<TSchema, TSchema, TSchema>["call"],
        ) => Promise<A>;
        json: (answer: A) => Static<R>;
      },
    ): void {
      route(app, plane, operationId, at, { access: reads(scope), response: ref(response), ...answer });
    },

    list<Where extends At, T extends TObject, M extends object>(
      operationId: string,
      at: Where,
      scope: Scope,
      item: T,
      rpc: ListRpc<ListRequest<Prefix, Where>, M>,
    ): void {
      cursorList(operationId, at, scope, item, {}, rpc, wireOf(item));
    },

    /**
     * A cursor list with filters of its own beside `limit` and `cursor` (each an optional query
     * parameter), its items put on the wire by `json`.
     */
    filteredList<Where extends At, F extends TProperties, M>(
      operationId: string,
      at: Where,
      scope: Scope,
      page: { item: TObject; filters: F; json: (message: M) => Record<string, unknown> },
      rpc: ListRpc<ListRequest<Prefix, Where, F>, M>,
    ): void {
      cursorList(operationId, at, scope, page.item, page.filters, rpc, page.json);
    },
  };
}

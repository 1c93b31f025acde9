// The route layer: how one route is declared (`route()`: its operation, where it is, its access,
// then as data its schemas and the call that answers it) and the plugin a plane's routes live in
// (`under()`, which names the plane); every route of the API is registered by `register.ts`. Each
// plane's folder holds its `index.ts` (tag, prose, named schemas), `prose.json`, `wire.ts`
// (schemas, requests, mappers) and one file of routes per resource; what every plane builds on is
// `wire.ts` beside this file.
import type { Scope } from "@evalp/kit";
import type { PageRequest } from "@evalp/proto/common/v1/page";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { type Static, type TObject, type TSchema, type TString, Type } from "@sinclair/typebox";
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from "fastify";
import type { RouteAccess } from "../admission/credentials.js";
import type { CursorCodec } from "../http/cursor.js";
import { pageOf, type UpstreamPage } from "../http/paging.js";
import { callOptions } from "../upstream.js";
import type { RouteDeps } from "./deps.js";
import {
  errorResponses,
  IdempotentHeaders,
  OptionalIdempotencyHeaders,
  PageQuery,
  successResponse,
  textResponse,
} from "./wire.js";

/**
 * What the document says of one operation, kept apart from the route that declares the rest: its
 * prose, its success statuses and its error statuses beyond the common ones.
 */
export type Prose = {
  summary: string;
  description: string;
  /**
   * What each success status means, by status. The route's answer is sent with the one status
   * given, or where a repeat's 200 stands beside it (a 201 repeated), with the other: the handler
   * sends the repeat's itself, with the same body (`await reply.code(200).send(…)`).
   */
  responses: Partial<Record<number, string>>;
  /** Error statuses beyond the common ones (401, 403, 404, 422, 429, 503), e.g. 409 or 410. */
  errors?: number[];
  /** What an error status means on this operation, where it says more than the common meaning. */
  errorMeanings?: Partial<Record<number, string>>;
};

/** The status a route's answer is sent with: its prose's success status (a repeat's 200 aside). */
export function successStatus(responses: Prose["responses"]): number {
  const statuses = Object.keys(responses).map(Number);
  return statuses.find((status) => status !== 200) ?? 200;
}

/**
 * A plane of the API as its routes declare it: the tag of its operations and their prose (its
 * `index.ts`, its `prose.json` by operationId). A route's operation is one of `Id`, so the compiler
 * refuses a route whose operation has no prose.
 */
export type PlaneProse<Id extends string = string> = {
  tag: string;
  prose: Record<Id, Prose>;
  /** The named schemas of its resources: components of the document, which answers `$ref`. */
  schemas: readonly TSchema[];
};

/** The plane tagged `tag` whose operations are described by `prose`, and its named `schemas`. */
export function plane<Id extends string>(
  tag: string,
  prose: Record<Id, Prose>,
  schemas: readonly TSchema[],
): PlaneProse<Id> {
  return { tag, prose, schemas };
}

/**
 * The gateway's Fastify instance with request and reply types inferred from TypeBox schemas, in
 * a plugin of a plane's routes under `Prefix`: a route's path parameters are those of the prefix
 * and of its path, and its operation is one of the plane's (`Id`).
 */
export type Api<Prefix extends string = string, Id extends string = string> = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyInstance["log"],
  TypeBoxTypeProvider
> & {
  readonly prefix: Prefix;
  /** The codec of list cursors (docs/paging.md), decorated once on the app by `registerRoutes` (`register.ts`). */
  readonly cursors: CursorCodec;
  /** The plane whose operations the plugin's routes answer: their tag and prose (`under`). */
  readonly plane: PlaneProse<Id>;
};

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
export type Method = (typeof METHODS)[number];

/** Where an operation is: its method and its path relative to its plugin's prefix, `"GET /apps/:app_id"`. */
export type Operation = `${Method} /${string}`;

/** The path of an operation (`"/apps/:app_id"` of `"GET /apps/:app_id"`). */
type PathOf<Op extends Operation> = Op extends `${Method} ${infer Path}` ? Path : never;

/** The method and path of `operation`, as `route()` registers them. */
export function methodAndPath(operation: Operation): { method: Method; path: string } {
  const method = METHODS.find((name) => operation.startsWith(`${name} /`));
  if (!method) throw new Error(`${operation}: not a method and a path`);
  return { method, path: operation.slice(method.length + 1) };
}

/** The names of a path's `:name` parameters. */
type ParamNames<Path extends string> = Path extends `${string}:${infer Name}/${infer Rest}`
  ? Name | ParamNames<`/${Rest}`>
  : Path extends `${string}:${infer Name}`
    ? Name
    : never;

/** A route's path parameters, every one a string (the auth plugin checks the shape of ids: 404). */
export type PathParams<Path extends string> = TObject<{ [Name in ParamNames<Path>]: TString }>;

/** The call options of an upstream RPC made for a request (request id, acting principal). */
export type Call = ReturnType<typeof callOptions>;

/** What a route's handler is given: its typed request, its reply, and the call options of its RPCs. */
export type RouteContext<P extends TSchema, Q extends TSchema, B extends TSchema> = {
  request: FastifyRequest<{ Params: Static<P>; Querystring: Static<Q>; Body: Static<B> }>;
  reply: FastifyReply;
  call: Call;
};

/**
 * An operator's read under `scope` (a list: any one of them). A read by POST (a preview) writes
 * nothing, so it needs no Idempotency-Key, though one is honoured (`"optional"`, docs/idempotency.md).
 */
export function reads<Idempotency extends "optional" | undefined = undefined>(
  scope: Scope | readonly Scope[],
  idempotency?: Idempotency,
) {
  return { auth: "operator", scope, ...(idempotency ? { idempotency } : {}) } as const;
}

/**
 * An operator's write under `scope`: it takes an Idempotency-Key (docs/idempotency.md), required
 * unless the write is the same whenever repeated (a PUT: `"optional"`).
 */
export function writes(scope: Scope, idempotency: "required" | "optional" = "required") {
  return { auth: "operator", scope, idempotency } as const;
}

/**
 * What a route declares beyond its operation, where it is and its access (`route()`'s other
 * arguments): its schemas, its answer and the few lines that are its own. Its statuses are its
 * prose's (`Prose`); the error responses are derived (the ones every route can give, plus the
 * prose's `errors`).
 */
export type RouteSpec<
  P extends TSchema,
  Q extends TSchema,
  B extends TSchema,
  R extends TSchema,
  A = unknown,
> = {
  query?: Q;
  body?: B;
  /** Other headers than Idempotency-Key, which the access's `idempotency` declares. */
  headers?: TObject;
  /** The success's body (none for a 204). */
  answer?: R;
  /**
   * The answer's media type when its body is not JSON (an event stream): the handler returns the
   * body (a stream) and the document shows it as text of this type; no `answer` then.
   */
  media?: string;
} & Answer<P, Q, B, R, A>;

/**
 * The `rpc` and `json` of a route that answers with what its path names (a get, an erasure): its
 * RPC asked with `ref(params)`, the path's parameters as the plane names the resource, and its
 * answer put on the wire by `json`.
 */
export function byPath<Params, Ref, A, J>(
  rpc: (ref: Ref, call: Call) => Promise<A>,
  ref: (params: Params) => Ref,
  json: (answer: A) => J,
) {
  return { rpc: ({ params }: { params: Params }, call: Call) => rpc(ref(params), call), json };
}

/** The item type of a page envelope's `items`. */
type PageItem<T> = T extends { items: Array<infer Item> } ? Item : never;

/**
 * How a route answers: most make one RPC and put its answer on the wire (`rpc`, then `json`); a
 * cursor list (docs/paging.md) asks its RPC for the page the query names (`list`, given that
 * `page`) and puts each item on the wire (`item`); the others, which check, combine or reply
 * themselves, say it all in a `handler`.
 */
type Answer<P extends TSchema, Q extends TSchema, B extends TSchema, R extends TSchema, A> =
  | {
      handler: (context: RouteContext<P, Q, B>) => Promise<Static<R> | undefined>;
      rpc?: never;
      json?: never;
      list?: never;
      item?: never;
    }
  | {
      rpc: (request: RouteContext<P, Q, B>["request"], call: RouteContext<P, Q, B>["call"]) => Promise<A>;
      json: (answer: A) => Static<R>;
      handler?: never;
      list?: never;
      item?: never;
    }
  | {
      list: (
        request: RouteContext<P, Q, B>["request"],
        page: PageRequest,
        call: RouteContext<P, Q, B>["call"],
      ) => Promise<UpstreamPage<A>>;
      item: (message: A) => PageItem<Static<R>>;
      handler?: never;
      rpc?: never;
      json?: never;
    };

/** The schema of a path's parameters, in the path's order (none: no schema). */
export function pathParams<Path extends string>(path: Path): PathParams<Path> | undefined {
  const names = [...path.matchAll(/:(\w+)/g)].map(([, name]) => name ?? "");
  if (names.length === 0) return undefined;
  // The properties are the names the type reads from the same path.
  return Type.Object(Object.fromEntries(names.map((name) => [name, Type.String()]))) as PathParams<Path>;
}

/** A file's routes, declared on a plugin of its plane under a prefix (`under`). */
export type Routes<Prefix extends string, Id extends string> = (
  api: Api<Prefix, Id>,
  deps: RouteDeps,
) => void;

/**
 * Registers `routes` (each a file's), operations of `plane`, as a plugin under `prefix` (path
 * parameters included), typed by the TypeBox provider: a plane's routes are written relative to
 * where they live.
 */
export async function under<Prefix extends string, Id extends string>(
  app: FastifyInstance,
  plane: PlaneProse<Id>,
  prefix: Prefix,
  deps: RouteDeps,
  routes: ReadonlyArray<Routes<Prefix, Id>>,
): Promise<void> {
  await app.register(
    async (scope) => {
      // Own to the plugin (its scope is a child of the app): its routes' tag and prose.
      const api = Object.assign(scope.withTypeProvider<TypeBoxTypeProvider>(), { plane });
      if (!isUnder(api, prefix))
        throw new Error(`routes under ${prefix} are registered at ${api.prefix} without cursors`);
      for (const declare of routes) declare(api, deps);
    },
    { prefix },
  );
}

/**
 * Whether `api` is a plugin under exactly `prefix` (not nested in another prefix) of an app whose
 * routes were registered by `registerRoutes` (which gives it the cursor codec).
 */
function isUnder<Prefix extends string, Id extends string>(
  api: Omit<Api<string, Id>, "cursors" | "prefix"> & { prefix: string },
  prefix: Prefix,
): api is Api<Prefix, Id> {
  return api.prefix === prefix && "cursors" in api;
}

type HttpAuth = Exclude<RouteAccess["auth"], "connection">;

/** How a route is reached; a connection token opens only the realtime door, a WebSocket (no route). */
export type HttpAccess = RouteAccess & { auth: HttpAuth };

/** The OpenAPI security requirement of an access mode (`[]`: public). */
const SECURITY: Record<HttpAuth, Array<Record<string, string[]>>> = {
  none: [],
  operator: [{ bearer: [] }, { apiKey: [] }, { session: [] }],
  session: [{ bearer: [] }, { session: [] }],
  participant: [{ participantToken: [] }],
  agent: [{ agentToken: [] }],
};

/** The headers a route validates and documents: Idempotency-Key as its access says (docs/idempotency.md). */
export function headersOf(spec: { method: Method; access: RouteAccess; headers?: TObject }): {
  headers?: TSchema;
} {
  const idempotencyKey =
    spec.method === "GET"
      ? undefined
      : { required: IdempotentHeaders, optional: OptionalIdempotencyHeaders, none: undefined }[
          spec.access.idempotency ?? "none"
        ];
  const parts = [spec.headers, idempotencyKey].filter((part): part is TObject => part !== undefined);
  if (parts.length === 0) return {};
  return { headers: parts.length === 1 ? parts[0] : Type.Composite(parts) };
}

/**
 * Declares one route on `app` (a plugin of a plane's routes, see `under`): the operation `id`
 * (whose prose is its plane's `prose.json`'s), where it is (`operation`: its method and its path
 * relative to the plugin's prefix), its `access` for the auth, rate-limit and idempotency plugins,
 * and the rest (`spec`): its schema for validation and the document, and its handler, whose answer
 * is sent with the declared success status.
 */
export function route<
  Prefix extends string,
  Id extends string,
  Op extends Operation,
  Q extends TSchema = TSchema,
  B extends TSchema = TSchema,
  R extends TSchema = TSchema,
  A = unknown,
>(
  app: Api<Prefix, Id>,
  id: NoInfer<Id>,
  operation: Op,
  access: HttpAccess,
  spec: RouteSpec<PathParams<`${Prefix}${PathOf<Op>}`>, Q, B, R, A>,
): void {
  const { method, path: url } = methodAndPath(operation);
  const params = pathParams(`${app.prefix}${url}`);
  const { summary, description, responses, errors = [], errorMeanings } = app.plane.prose[id];
  const status = successStatus(responses);
  // Whether an Idempotency-Key is honoured (admission/checks.ts: not declared is "none").
  const idempotent =
    method !== "GET" && (access.idempotency === "required" || access.idempotency === "optional");
  type Params = PathParams<`${Prefix}${PathOf<Op>}`>;
  app.route<{ Params: Static<Params>; Querystring: Static<Q>; Body: Static<B> }>({
    method,
    url,
    config: { access },
    schema: {
      tags: [app.plane.tag],
      operationId: id,
      summary,
      description,
      security: SECURITY[access.auth],
      ...(params ? { params } : {}),
      // A list's query is at least its page's `limit` and `cursor`.
      ...(spec.query ? { querystring: spec.query } : spec.list ? { querystring: PageQuery } : {}),
      ...(spec.body ? { body: spec.body } : {}),
      ...headersOf({ method, access, headers: spec.headers }),
      response: {
        ...Object.fromEntries(
          Object.entries(responses).map(([code, meaning = ""]) => [
            code,
            spec.media
              ? textResponse(meaning, spec.media)
              : successResponse(meaning, spec.answer, idempotent),
          ]),
        ),
        ...errorResponses(access, spec.body !== undefined, errors, idempotent, errorMeanings),
      },
    },
    handler: async (request, reply) => {
      const call = callOptions(request);
      const body = spec.handler
        ? await spec.handler({ request, reply, call })
        : spec.list
          ? await pageOf(request, app.cursors, (page) => spec.list(request, page, call), spec.item)
          : spec.json(await spec.rpc(request, call));
      if (reply.sent) return reply;
      // A 204 is sent as an empty string, not as nothing: the idempotency plugin stores (and a
      // retry with the same key replays) only an answer that was sent with a payload.
      return reply.code(status).send(status === 204 ? "" : body);
    },
  });
}

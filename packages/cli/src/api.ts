/** A path's parameters and query, as the API's paths name them (`{organization_id}` …). */
export type Params = {
  path?: Record<string, string>;
  query?: Record<string, string | number | boolean | undefined>;
};

/**
 * What the commands need of the API: a call that answers the body or throws a CliError (code,
 * message, request id), and a list that follows `next_cursor` up to a count or to the end.
 */
export type Api = {
  get<T>(path: string, params?: Params): Promise<T>;
  post<T>(path: string, params?: Params, body?: unknown): Promise<T>;
  patch<T>(path: string, params?: Params, body?: unknown): Promise<T>;
  /** Every item of a cursor list, newest first, or the first `limit` of them. */
  list<T>(path: string, params?: Params, limit?: number): Promise<T[]>;
};

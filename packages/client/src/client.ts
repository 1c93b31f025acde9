import createFetchClient, { type Client } from "openapi-fetch";
import { type PagedPath, type PageInit, type PageItem, paginate } from "./paginate.js";
import type { RetryOptions } from "./retry.js";
import { createTransport, type Fetch } from "./transport.js";
import type { paths } from "./types.js";

export type ClientOptions = {
  /** The gateway's address, e.g. `https://api.example.com` or `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** An environment API key (`evk_…`), sent as `X-API-Key`. */
  apiKey?: string;
  /** An access token (log-in, sign-up), sent as `Authorization: Bearer`. */
  accessToken?: string;
  /** Where requests go (default the global `fetch`): a proxy, a test double, a tracing wrapper. */
  fetch?: Fetch;
  /** Retries of 429 and 503 (default 3 tries, at most 30 s of wait each); `false` for none. */
  retry?: RetryOptions | false;
  /** Headers sent with every request (e.g. a `User-Agent`). */
  headers?: Record<string, string>;
};

/**
 * The typed methods of every endpoint (`GET`, `POST`, `PUT`, `PATCH`, `DELETE`, each answering
 * `{data, error, response}` as openapi-fetch does) and `paginate` over cursor lists.
 */
export type EvalpClient = Client<paths> & {
  /**
   * Every item of a cursor list, across pages:
   * `for await (const app of client.paginate("/v1/organizations/{organization_id}/apps", { params }))`.
   */
  paginate<Path extends PagedPath>(
    path: Path,
    init: PageInit<Path>,
  ): AsyncGenerator<PageItem<Path>, void, undefined>;
};

/** A client of the API: credentials on every request, an Idempotency-Key on every write, retries. */
export function createClient(options: ClientOptions): EvalpClient {
  const headers: Record<string, string> = { ...options.headers };
  if (options.apiKey !== undefined) headers["x-api-key"] = options.apiKey;
  if (options.accessToken !== undefined) headers.authorization = `Bearer ${options.accessToken}`;
  const client = createFetchClient<paths>({
    baseUrl: options.baseUrl,
    headers,
    fetch: createTransport(options.fetch ?? ((request) => fetch(request)), options.retry),
  });
  return Object.assign(client, {
    paginate: <Path extends PagedPath>(path: Path, init: PageInit<Path>) => paginate(client, path, init),
  });
}

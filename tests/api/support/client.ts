/** A response as a test reads it. */
export type ApiResponse<T = any> = { status: number; headers: Headers; body: T; text: string };

export type RequestOptions = {
  token?: string;
  apiKey?: string;
  cookie?: string;
  idempotencyKey?: string;
  headers?: Record<string, string>;
  /** A raw body sent as is (with its own content type), instead of JSON. */
  raw?: string | Buffer;
  /** Aborts the request (e.g. `AbortSignal.timeout(ms)` to bound how long a client waits). */
  signal?: AbortSignal;
};

/**
 * A thin client over fetch that speaks the API as a client would: JSON in, JSON out. Given
 * several gateways, it sends its requests to each in turn, as a balancer would.
 */
export function apiClient(baseUrls: string | readonly string[]) {
  const bases = typeof baseUrls === "string" ? [baseUrls] : baseUrls;
  let turn = 0;
  async function call<T = any>(
    method: string,
    path: string,
    body?: unknown,
    options: RequestOptions = {},
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.apiKey) headers["x-api-key"] = options.apiKey;
    if (options.cookie) headers.cookie = options.cookie;
    if (options.idempotencyKey) headers["idempotency-key"] = options.idempotencyKey;
    let payload: string | Buffer | undefined;
    if (options.raw !== undefined) payload = options.raw;
    else if (body !== undefined) {
      payload = JSON.stringify(body);
      headers["content-type"] ??= "application/json";
    }
    const baseUrl = bases[turn++ % bases.length];
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers,
      body: payload,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    // A stream of Server-Sent Events does not end: its answer here is its status and headers,
    // the stream closed unread (tests that read one open it themselves).
    if (response.ok && response.headers.get("content-type")?.startsWith("text/event-stream")) {
      await response.body?.cancel();
      return { status: response.status, headers: response.headers, body: null as T, text: "" };
    }
    const text = await response.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = text;
    }
    return { status: response.status, headers: response.headers, body: parsed as T, text };
  }
  return {
    call,
    get: <T = any>(path: string, options?: RequestOptions) => call<T>("GET", path, undefined, options),
    post: <T = any>(path: string, body?: unknown, options?: RequestOptions) =>
      call<T>("POST", path, body, options),
    patch: <T = any>(path: string, body?: unknown, options?: RequestOptions) =>
      call<T>("PATCH", path, body, options),
  };
}

export type ApiClient = ReturnType<typeof apiClient>;

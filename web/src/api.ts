import { createClient, EvalpApiError, type EvalpClient } from "@evalp/client";

/** The API of the origin that served the page: pages and API share PUBLIC_URL. */
export function api(accessToken?: string): EvalpClient {
  return createClient({
    baseUrl: location.origin,
    ...(accessToken === undefined ? {} : { accessToken }),
    // A person waits for an answer: one quick retry at most, never half a minute.
    retry: { attempts: 2, maxDelayMs: 3000 },
  });
}

/** The token of a mailed link (`?token=…`), or undefined when the link lost it. */
export function queryToken(): string | undefined {
  const token = new URLSearchParams(location.search).get("token");
  return token === null || token === "" ? undefined : token;
}

/** Words for what the API answered, for the codes a page expects; otherwise the API's own message. */
export function errorWords(error: unknown, words: Partial<Record<string, string>>): string {
  if (!(error instanceof EvalpApiError))
    return "The service could not be reached. Check your connection and try again.";
  const known = words[error.code];
  if (known !== undefined) return known;
  if (error.code === "validation_error") {
    const password = error.problems.some((problem) => problem.loc.includes("password"));
    if (password) return "The password must be 8 to 256 characters long.";
  }
  if (error.code === "rate_limited") {
    const wait = error.retryAfter ? ` in ${error.retryAfter} seconds` : " later";
    return `Too many attempts. Try again${wait}.`;
  }
  const reference = error.requestId ? ` (reference ${error.requestId})` : "";
  return `${error.message}${reference}`;
}

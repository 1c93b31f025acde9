import { ERROR_CATALOG, isErrorCode } from "@evalp/kit";
import { expect } from "vitest";
import type { ApiResponse } from "../../api/support/client.js";

/** Where a validation problem's `loc` may start (docs/errors.md; `frame` is for WebSocket frames only). */
const LOC_ROOTS = ["body", "query", "path", "header"];

/** Request ids a client may choose (docs/http.md). */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** What must never reach a client in an error (docs/errors.md): stack frames, SQL, internal addresses. */
const INTERNALS =
  /\bat \S+:\d+:\d+\)|node_modules|ECONNREFUSED|SQLSTATE|relation "|duplicate key value|violates .+ constraint|syntax error at or near|invalid input syntax/i;

/**
 * Asserts what every answer of the API owes a client, whatever was sent: no 5xx, an
 * `X-Request-Id` (the client's own when well-formed), and for every error exactly one of the two
 * shapes of docs/errors.md: the application error `{"detail": {code, message, context, request_id}}`
 * with a catalogued code of that status, or the 422 list of Pydantic-shaped problems.
 */
export function expectContractResponse(
  response: ApiResponse,
  sentRequestId: string | undefined,
  what: string,
): void {
  const requestId = response.headers.get("x-request-id");
  const context = `${what}\n→ ${response.status} ${response.text.slice(0, 500)}`;
  expect(response.status, context).toBeLessThan(500);
  expect(requestId, context).toBeTruthy();
  if (sentRequestId !== undefined && CLIENT_REQUEST_ID.test(sentRequestId)) {
    expect(requestId, context).toBe(sentRequestId);
  }
  if (response.status < 400) return;
  expect(response.headers.get("content-type"), context).toMatch(/^application\/json/);
  expect(response.body, context).toBeTypeOf("object");
  expect(Object.keys(response.body ?? {}), context).toEqual(["detail"]);
  const detail = response.body.detail;
  if (Array.isArray(detail)) {
    expect(response.status, context).toBe(422);
    expect(detail.length, context).toBeGreaterThan(0);
    for (const item of detail) {
      expect(Object.keys(item).sort(), context).toEqual(["ctx", "input", "loc", "msg", "type"]);
      expect(LOC_ROOTS, context).toContain(item.loc[0]);
      for (const part of item.loc) expect(part, context).toBeTypeOf("string");
      expect(item.msg, context).toBeTypeOf("string");
      expect(item.type, context).toMatch(/^[a-z_]+$/);
      expect(item.ctx !== null && typeof item.ctx === "object" && !Array.isArray(item.ctx), context).toBe(
        true,
      );
    }
    return;
  }
  expect(Object.keys(detail).sort(), context).toEqual(["code", "context", "message", "request_id"]);
  expect(isErrorCode(detail.code), context).toBe(true);
  expect(ERROR_CATALOG[detail.code as keyof typeof ERROR_CATALOG].status, context).toBe(response.status);
  expect(detail.message, context).toBeTypeOf("string");
  expect(detail.context !== null && typeof detail.context === "object", context).toBe(true);
  // A replayed error keeps the first request's id in its body (docs/idempotency.md).
  if (response.headers.get("idempotent-replayed") === "true")
    expect(detail.request_id, context).toBeTypeOf("string");
  else expect(detail.request_id, context).toBe(requestId);
  expect(`${detail.message} ${JSON.stringify(detail.context)}`, context).not.toMatch(INTERNALS);
}

/** Asserts an application error of `status` and `code` in the contract's shape. */
export function expectErrorShape(response: ApiResponse, status: number, code: string, what: string): void {
  expectContractResponse(response, undefined, what);
  expect(response.status, `${what}\n→ ${response.text.slice(0, 300)}`).toBe(status);
  expect(response.body.detail.code, what).toBe(code);
}

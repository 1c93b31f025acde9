import { type Receiver, startReceiver } from "@evalp/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, EvalpApiError, unwrap } from "./index.js";

const ORG = "0190c0de-0000-7000-8000-000000000001";
let server: Receiver;
beforeAll(async () => {
  server = await startReceiver();
});
afterAll(() => server.close());

const client = () => createClient({ baseUrl: server.url, retry: false });
const getApp = () =>
  unwrap(
    client().GET("/v1/organizations/{organization_id}/apps/{app_id}", {
      params: { path: { organization_id: ORG, app_id: "x" } },
    }),
  );
const caught = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.unreachable("the call should have thrown"),
    (error: unknown) => {
      expect(error).toBeInstanceOf(EvalpApiError);
      return error as EvalpApiError;
    },
  );

describe("EvalpApiError", () => {
  it("carries an application error's status, code, message, context and the body's request id", async () => {
    server.respond({
      status: 404,
      headers: { "content-type": "application/json", "x-request-id": "header-id" },
      body: JSON.stringify({
        detail: {
          code: "not_found",
          message: "app not found",
          context: { resource: "app" },
          request_id: "body-id",
        },
      }),
    });
    const error = await caught(getApp());
    expect(error).toMatchObject({
      name: "EvalpApiError",
      status: 404,
      code: "not_found",
      message: "app not found",
      context: { resource: "app" },
      // A replayed error keeps the first request's id in its body: that is the one to quote.
      requestId: "body-id",
    });
    expect(error.problems).toEqual([]);
  });

  it("turns a validation error into code validation_error with its problems, the request id from the header", async () => {
    const problem = {
      loc: ["query", "limit"],
      msg: "Input should be a valid integer",
      type: "int_parsing",
      ctx: {},
      input: "x",
    };
    server.respond({
      status: 422,
      headers: { "content-type": "application/json", "x-request-id": "req-422" },
      body: JSON.stringify({ detail: [problem] }),
    });
    const error = await caught(getApp());
    expect(error).toMatchObject({ status: 422, code: "validation_error", requestId: "req-422" });
    expect(error.problems).toEqual([problem]);
    expect(error.message).toBe("query.limit: Input should be a valid integer");
  });

  it("names what it can of an answer that is not the API's envelope", async () => {
    server.respond({ status: 502, headers: { "x-request-id": "proxy" }, body: "<html>bad gateway</html>" });
    expect(await caught(getApp())).toMatchObject({ status: 502, code: "internal", requestId: "proxy" });
    server.respond({ status: 503, retryAfter: "7" });
    expect(await caught(getApp())).toMatchObject({ status: 503, code: "unavailable", retryAfter: "7" });
  });
});

describe("unwrap", () => {
  it("returns the data of a success, and nothing for a 204", async () => {
    server.respond({ status: 204 });
    const deleted = await unwrap(
      client().DELETE(
        "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/webhooks/{id}",
        {
          params: { path: { organization_id: ORG, app_id: "a", environment_id: "e", id: "w" } },
        },
      ),
    );
    expect(deleted).toBeUndefined();
  });
});

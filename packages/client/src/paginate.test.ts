import { type Receiver, type ReceiverReply, startReceiver } from "@evalp/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, EvalpApiError } from "./index.js";

const ORG = "0190c0de-0000-7000-8000-000000000001";
let server: Receiver;
beforeAll(async () => {
  server = await startReceiver();
});
afterAll(() => server.close());

const app = (slug: string) => ({
  id: slug,
  organization_id: ORG,
  slug,
  name: slug,
  description: null,
  created_at: "t",
});
/** Three pages of apps, chained by cursors the server made up. */
const PAGES: Record<string, { items: ReturnType<typeof app>[]; next_cursor: string | null }> = {
  "": { items: [app("e"), app("d")], next_cursor: "c1" },
  c1: { items: [app("c"), app("b")], next_cursor: "c2" },
  c2: { items: [app("a")], next_cursor: null },
};

describe("paginate", () => {
  it("yields every item across pages, following next_cursor and keeping the caller's query", async () => {
    server.requests.length = 0;
    server.respond((request) => {
      const cursor = new URL(request.path, server.url).searchParams.get("cursor") ?? "";
      return {
        status: 200,
        headers: { "content-type": "application/json" },
        body: JSON.stringify(PAGES[cursor]),
      };
    });
    const client = createClient({ baseUrl: server.url, apiKey: "evk_k" });
    const slugs: string[] = [];
    for await (const item of client.paginate("/v1/organizations/{organization_id}/apps", {
      params: { path: { organization_id: ORG }, query: { limit: 2 } },
    })) {
      slugs.push(item.slug);
    }
    expect(slugs).toEqual(["e", "d", "c", "b", "a"]);
    expect(server.requests.map((request) => request.path)).toEqual([
      `/v1/organizations/${ORG}/apps?limit=2`,
      `/v1/organizations/${ORG}/apps?limit=2&cursor=c1`,
      `/v1/organizations/${ORG}/apps?limit=2&cursor=c2`,
    ]);
    expect(server.requests.every((request) => request.headers["x-api-key"] === "evk_k")).toBe(true);
  });

  it("stops at the first item the caller wants, asking no further page", async () => {
    server.requests.length = 0;
    const client = createClient({ baseUrl: server.url });
    for await (const item of client.paginate("/v1/organizations/{organization_id}/apps", {
      params: { path: { organization_id: ORG } },
    })) {
      expect(item.slug).toBe("e");
      break;
    }
    expect(server.requests).toHaveLength(1);
  });

  it("throws a refused page as an EvalpApiError", async () => {
    server.respond(
      (request): ReceiverReply =>
        request.path.includes("cursor=c1")
          ? {
              status: 422,
              headers: { "content-type": "application/json", "x-request-id": "bad-cursor" },
              body: JSON.stringify({
                detail: [
                  {
                    loc: ["query", "cursor"],
                    msg: "Value error, invalid cursor",
                    type: "value_error",
                    ctx: {},
                    input: "c1",
                  },
                ],
              }),
            }
          : { status: 200, headers: { "content-type": "application/json" }, body: JSON.stringify(PAGES[""]) },
    );
    const client = createClient({ baseUrl: server.url });
    const seen: string[] = [];
    const walk = async () => {
      for await (const item of client.paginate("/v1/organizations/{organization_id}/apps", {
        params: { path: { organization_id: ORG } },
      })) {
        seen.push(item.slug);
      }
    };
    const error = await walk().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(EvalpApiError);
    expect(error).toMatchObject({ status: 422, code: "validation_error", requestId: "bad-cursor" });
    expect(seen).toEqual(["e", "d"]);
  });
});

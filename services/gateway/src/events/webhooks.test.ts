import { describe, expect, it } from "vitest";
import { EVENT_TYPES } from "../routes/webhooks/wire.js";
import { EVENT_CATALOG } from "./catalog.js";
import { eventWebhooks } from "./webhooks.js";

type Operation = {
  operationId: string;
  requestBody: { content: { "application/json": { schema: { $ref: string }; example: unknown } } };
};

describe("the document's webhooks", () => {
  it("has one operation per event type an endpoint can subscribe to, each body a named component", () => {
    const webhooks = eventWebhooks() as Record<string, { post: Operation }>;
    expect(Object.keys(webhooks).sort()).toEqual(EVENT_TYPES.filter((type) => type !== "*").sort());
    for (const [type, { post }] of Object.entries(webhooks)) {
      const name = EVENT_CATALOG[type as keyof typeof EVENT_CATALOG].schema.$id;
      expect(post.requestBody.content["application/json"].schema).toEqual({
        $ref: `#/components/schemas/${name}`,
      });
      // The catalog's sample is the body's example.
      expect(post.requestBody.content["application/json"].example).toEqual(
        EVENT_CATALOG[type as keyof typeof EVENT_CATALOG].sample,
      );
    }
    const ids = Object.values(webhooks).map(({ post }) => post.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(webhooks["interview.agent_requested"]?.post.operationId).toBe("interviewAgentRequestedEvent");
  });
});

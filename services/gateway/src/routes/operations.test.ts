import { describe, expect, it } from "vitest";
import { describeApi } from "../describe.js";
import { AUTH, CONTROL } from "./control/plane.js";
import { INTERVIEW } from "./interview/plane.js";
import { parseOperations } from "./operations.js";
import { PLATFORM } from "./platform/plane.js";
import { WEBHOOKS } from "./webhooks/plane.js";

type Operation = { operationId?: string; tags?: string[] };

/** Every operation of the document, by operationId, with its tag. */
async function documentedOperations(): Promise<Map<string, string | undefined>> {
  const document = (await describeApi({})) as { paths: Record<string, Record<string, Operation>> };
  const operations = new Map<string, string | undefined>();
  for (const methods of Object.values(document.paths))
    for (const operation of Object.values(methods))
      if (operation.operationId) operations.set(operation.operationId, operation.tags?.[0]);
  return operations;
}

describe("the operations' prose", () => {
  it("has a section for every route, and a route for every section, in the route's plane", async () => {
    const documented = await documentedOperations();
    const described = [CONTROL, PLATFORM, INTERVIEW, WEBHOOKS].flatMap((plane) =>
      plane.operationIds().map((id) => [id, plane.tag] as const),
    );
    // The auth routes are the control plane's, under a tag of their own.
    const routed = [...documented]
      .filter(([, tag]) => tag !== "guides")
      .map(([id, tag]) => [id, tag === AUTH.tag ? CONTROL.tag : tag] as const);
    expect(new Map(described)).toEqual(new Map(routed));
    expect(described).toHaveLength(routed.length);
    // Building the whole app (every plugin and route) takes seconds on a busy machine.
  }, 30_000);

  it("reads a section's summary, paragraphs and success responses", () => {
    const markdown = [
      "# A plane",
      "",
      "## getThing",
      "Get a thing",
      "",
      "One thing, with its",
      "parts.",
      "",
      "Requires `things:read`.",
      "",
      "- 201: The thing, made.",
      "- 200: The thing made first.",
      "",
    ].join("\n");
    expect(parseOperations(markdown).get("getThing")).toEqual({
      summary: "Get a thing",
      description: "One thing, with its parts.\n\nRequires `things:read`.",
      responses: { 200: "The thing made first.", 201: "The thing, made." },
    });
  });

  it("refuses a section without its responses, and one described twice", () => {
    expect(() => parseOperations("## getThing\nGet a thing\n\nOne thing.\n")).toThrow(/responses/);
    const twice = "## getThing\nGet\n\nOne.\n\n- 200: It.\n\n## getThing\nGet\n\nOne.\n\n- 200: It.\n";
    expect(() => parseOperations(twice)).toThrow(/twice/);
  });
});

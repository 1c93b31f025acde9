import { describe, expect, it } from "vitest";
import { describeApi } from "../describe.js";
import { AUTH, CONTROL } from "./control/index.js";
import { INTERVIEW } from "./interview/index.js";
import { PLATFORM } from "./platform/index.js";
import { WEBHOOKS } from "./webhooks/index.js";

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
  it("has prose for every route, and a route for every operation with prose, in the route's plane", async () => {
    const documented = await documentedOperations();
    const described = [CONTROL, PLATFORM, INTERVIEW, WEBHOOKS].flatMap((plane) =>
      Object.keys(plane.prose).map((id) => [id, plane.tag] as const),
    );
    // The auth routes are the control plane's, under a tag of their own.
    const routed = [...documented]
      .filter(([, tag]) => tag !== "guides")
      .map(([id, tag]) => [id, tag === AUTH.tag ? CONTROL.tag : tag] as const);
    expect(new Map(described)).toEqual(new Map(routed));
    expect(described).toHaveLength(routed.length);
    // Building the whole app (every plugin and route) takes seconds on a busy machine.
  }, 30_000);
});

import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { ref } from "../wire.js";
import { COMPONENT_CONTENTS, ContentOutput } from "./contents.js";
import { TemplateDefinition } from "./wire.js";

/** Answers `content` through the response schema of a definition's content, as the routes do. */
async function serialized(content: unknown): Promise<unknown> {
  const app = Fastify();
  for (const schema of [...COMPONENT_CONTENTS, TemplateDefinition]) app.addSchema(schema);
  app.get(
    "/",
    { schema: { response: { 200: { type: "object", properties: { content: ContentOutput } } } } },
    () => ({
      content,
    }),
  );
  const response = await app.inject({ method: "GET", url: "/" });
  await app.close();
  expect(response.statusCode).toBe(200);
  return response.json().content;
}

describe("a definition's content in a response", () => {
  it("keeps every field of a content of its kind's whole shape, nested extras included", async () => {
    const content = {
      kind: "scorecard",
      note: "an extra field",
      axes: [
        {
          id: "a",
          label: "A",
          expr: { op: "var", path: "answers.q1.value" },
          bands: [{ id: "low", label: "Low", min: 0, max: 5, colour: "red" }],
          weight: 2,
        },
      ],
    };
    expect(await serialized(content)).toEqual(content);
  });

  it("answers a draft that has only its kind, or a kind's fields of the wrong type, as it is", async () => {
    expect(await serialized({ kind: "experience" })).toEqual({ kind: "experience" });
    const odd = { kind: "context", variables: "not an object", extra: [1, { two: 2 }] };
    expect(await serialized(odd)).toEqual(odd);
  });

  it("names each of the six contents as a component", () => {
    expect(COMPONENT_CONTENTS.map((schema) => schema.$id)).toEqual([
      "ScorecardContent",
      "ExperienceContent",
      "ContextContent",
      "GuardrailContent",
      "AdaptivePolicyContent",
      "ReportTemplateContent",
    ]);
    expect(ref(COMPONENT_CONTENTS[0] ?? TemplateDefinition)).toMatchObject({ $ref: "ScorecardContent" });
  });
});

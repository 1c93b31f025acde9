import { COMPONENT_KINDS, COMPONENT_SCHEMAS } from "@evalp/components";
import { type TSchema, Type } from "@sinclair/typebox";
import { StringEnum } from "../../validation/request-validator.js";
import { ref } from "../wire.js";

// The six component contents of docs/expressions.md#component-contents as named components of the document, and the two
// ways a definition's `content` is described: as a request checks it, and as a response shows it.

type JsonSchema = { [key: string]: unknown };

/**
 * A copy of `schema` whose objects say `additionalProperties: true` where they said nothing. For a
 * validator that is the same schema ("more fields may be added"), but the response serializer
 * drops what an object does not declare unless told so, and a content is answered as it was sent.
 */
function keepingExtraFields(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(keepingExtraFields);
  if (typeof schema !== "object" || schema === null) return schema;
  const copy: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) copy[key] = keepingExtraFields(value);
  if (copy.type === "object" && copy.additionalProperties === undefined) copy.additionalProperties = true;
  return copy;
}

/** A component content as a named schema: `$id` and title are the content's name (`ScorecardContent`, …). */
function namedContent(kind: (typeof COMPONENT_KINDS)[number]): TSchema {
  const schema = COMPONENT_SCHEMAS[kind];
  const title = schema.title as string;
  return Type.Unsafe({
    ...(keepingExtraFields(JSON.parse(JSON.stringify(schema))) as JsonSchema),
    $id: title,
    title,
    description: `The content of a \`${kind}\` definition (docs/expressions.md#component-contents); more fields may be added.`,
  });
}

/** The six contents, in the order of the interface's `*_version_id` fields. */
export const COMPONENT_CONTENTS = COMPONENT_KINDS.map(namedContent);

const Kind = StringEnum(COMPONENT_KINDS);

/**
 * A content as a request gives it. Creation checks only the kind; the full shape of each kind is
 * checked when a bundle holding it enters `validated` (docs/expressions.md#component-contents), so the six named shapes are
 * not part of this schema: they would refuse drafts the contract accepts.
 */
export const ContentInput = Type.Object(
  { kind: Kind },
  {
    additionalProperties: true,
    description:
      "A component content: its `kind` is checked here, its whole shape (ScorecardContent, ExperienceContent, " +
      "ContextContent, GuardrailContent, AdaptivePolicyContent, ReportTemplateContent) when a bundle holding " +
      "it enters `validated`.",
  },
);

/**
 * A content as a response shows it: one of the six, or a draft that does not have its kind's
 * whole shape yet (the serializer answers each with the first that fits, every field kept).
 */
export const ContentOutput = Type.Union(
  [
    ...COMPONENT_CONTENTS.map((schema) => ref(schema)),
    Type.Object(
      { kind: Kind },
      { additionalProperties: true, description: "A content not (yet) of its kind's whole shape." },
    ),
  ],
  { description: "A component content (docs/expressions.md#component-contents)." },
);

import type { Bundle as BundleMessage } from "@evalp/proto/platform/v1/bundle";
import type { RecordAnswerResponse } from "@evalp/proto/platform/v1/continuous";
import type { Definition, Template as TemplateMessage } from "@evalp/proto/platform/v1/template";
import { Type } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import { StringEnum } from "../../validation/request-validator.js";
import { DateTime, named, ref, required, Uuid, wireOf } from "../wire.js";
import { COMPONENT_CONTENTS, ContentOutput } from "./contents.js";

// The platform's resources on the wire: their schemas (named components of the document) and the
// mappers from the RPC messages. Optional fields are absent rather than null (interface `(o)`).

export const BUNDLE_STATUSES = ["draft", "validated", "published", "deprecated", "archived"] as const;

/** The six `*_version_id` fields of a bundle, in the interface's order, and their RPC names. */
export const COMPONENT_FIELDS = [
  ["scorecard_version_id", "scorecardVersionId"],
  ["experience_version_id", "experienceVersionId"],
  ["context_version_id", "contextVersionId"],
  ["guardrail_version_id", "guardrailVersionId"],
  ["adaptive_policy_version_id", "adaptivePolicyVersionId"],
  ["report_template_version_id", "reportTemplateVersionId"],
] as const;

/** The six `*_version_id` fields as schemas, each a uuid. */
export const ComponentVersionIds = Object.fromEntries(COMPONENT_FIELDS.map(([field]) => [field, Uuid]));

export const TemplateDefinition = Type.Object(
  {
    id: Uuid,
    app_id: Uuid,
    business_id: Type.String(),
    content: ContentOutput,
    content_hash: Type.String(),
    locale: Type.String(),
    name: Type.String(),
    revision: Type.Integer(),
    created_at: DateTime,
    created_by_user_id: Type.Optional(Uuid),
    published_at: Type.Optional(DateTime),
  },
  named(
    "TemplateDefinition",
    "One revision of a definition of a template: a component content in one locale.",
  ),
);

/** The fields of a definition that only rename its message's; its content is mapped apart. */
const definitionFields = wireOf(Type.Omit(TemplateDefinition, ["content"]));

export function definitionJson(message: Definition | undefined) {
  const definition = required(message, "definition");
  return { ...definitionFields(definition), content: definition.content ?? {} };
}

export const Template = Type.Object(
  {
    id: Uuid,
    app_id: Uuid,
    name: Type.String(),
    created_at: DateTime,
    definitions: Type.Array(ref(TemplateDefinition)),
  },
  named("Template", "A template with every revision of its definitions."),
);

/** The fields of a template that only rename its message's; its definitions are mapped apart. */
const templateFields = wireOf(Type.Omit(Template, ["definitions"]));

export function templateJson(message: TemplateMessage | undefined) {
  const template = required(message, "template");
  return { ...templateFields(template), definitions: template.definitions.map(definitionJson) };
}

export const TemplateClone = Type.Object(
  { template_id: Uuid, definitions: Type.Array(ref(TemplateDefinition)) },
  named("TemplateClone", "The new template of a clone and its definitions (revision 1 each)."),
);

export const Bundle = Type.Object(
  {
    id: Uuid,
    app_id: Uuid,
    name: Type.String(),
    // Typed as the string the RPC answers; the enum says what it can be.
    status: Type.Unsafe<string>(StringEnum(BUNDLE_STATUSES)),
    fingerprint: Type.String(),
    revision: Type.Integer(),
    ...ComponentVersionIds,
    created_at: DateTime,
    created_by_user_id: Type.Optional(Uuid),
    published_at: Type.Optional(DateTime),
  },
  named("Bundle", "Six component versions (definition revisions) tied together, with a status."),
);

/** The fields of a bundle that only rename its message's; its six component ids are a map in it. */
const bundleFields = wireOf(
  Type.Omit(
    Bundle,
    COMPONENT_FIELDS.map(([field]) => field),
  ),
);

export function bundleJson(message: BundleMessage | undefined) {
  const bundle = required(message, "bundle");
  const components = bundle.components;
  return {
    ...bundleFields(bundle),
    ...Object.fromEntries(COMPONENT_FIELDS.map(([field, proto]) => [field, components?.[proto] ?? ""])),
  };
}

export const BundlePreview = Type.Object(
  {
    report: Type.Record(Type.String(), Type.Unknown(), { description: "The report (docs/expressions.md)." }),
    trace: Type.Record(Type.String(), Type.Unknown(), {
      description:
        "How each value was computed (docs/expressions.md#the-trace): `axes`, each axis's steps; `truncated` and `omitted_steps` when steps were left out past the trace's 1 MiB budget.",
    }),
  },
  named("BundlePreview", "What the bundle's scorecard makes of sample answers."),
);

export const ContinuousAnswerReceipt = Type.Object(
  {
    id: Uuid,
    client_answer_id: Type.String(),
    question_id: Type.String(),
    idempotent_replay: Type.Boolean(),
    delivery_id: Type.Optional(Uuid),
  },
  named(
    "ContinuousAnswerReceipt",
    "The receipt of a continuous answer; `idempotent_replay` when it repeats the first.",
  ),
);

export function receiptJson(answer: RecordAnswerResponse) {
  return {
    id: answer.id,
    client_answer_id: answer.clientAnswerId,
    question_id: answer.questionId,
    idempotent_replay: answer.idempotentReplay,
    ...(answer.deliveryId ? { delivery_id: answer.deliveryId } : {}),
  };
}

/** The named schemas of this plane, registered once with the app (components of the document). */
export const PLATFORM_SCHEMAS = [
  ...COMPONENT_CONTENTS,
  TemplateDefinition,
  Template,
  TemplateClone,
  Bundle,
  BundlePreview,
  ContinuousAnswerReceipt,
];

// What the platform's requests carry: the resources a path names, as its RPCs take them.

/** Where an app's platform resources live (the APP prefix of the contract). */
export const APP_PREFIX = "/v1/organizations/:organization_id/apps/:app_id";

/** The path parameters of an APP route. */
export type AppPath = { organization_id: string; app_id: string };

/** The wire form of an APP path, which the platform checks against the control plane (404 otherwise). */
export function appRef(params: AppPath) {
  return { organizationId: params.organization_id, appId: params.app_id };
}

/** The bundle a path names, as the bundle RPCs take it. */
export function bundleRef(params: AppPath & { bundle_id: string }) {
  return { app: appRef(params), bundleId: params.bundle_id };
}

/** The template a path names, as the template RPCs take it. */
export function templateRef(params: AppPath & { template_id: string }) {
  return { app: appRef(params), templateId: params.template_id };
}

/** Who creates a platform resource: the acting user, when a user (not a key) acts. */
export function authoredBy(request: FastifyRequest) {
  return { createdByUserId: request.access?.principal.userId ?? undefined };
}

import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Bundle, BundleSchema, ComponentVersionsSchema } from "@evalp/proto/platform/v1/bundle";
import {
  type Definition,
  DefinitionSchema,
  type Template,
  TemplateSchema,
} from "@evalp/proto/platform/v1/template";

export type DefinitionRow = {
  id: string;
  template_id: string;
  app_id: string;
  business_id: string;
  locale: string;
  name: string;
  kind: string;
  content: JsonObject;
  content_hash: string;
  revision: number;
  created_by_user_id: string | null;
  created_at: Date;
  published_at: Date | null;
};
export type TemplateRow = { id: string; app_id: string; name: string; created_at: Date };

/** The six component fields of a bundle, in the interface's order (the fingerprint's order too). */
export const COMPONENT_FIELDS = [
  ["scorecard_version_id", "scorecard"],
  ["experience_version_id", "experience"],
  ["context_version_id", "context"],
  ["guardrail_version_id", "guardrail"],
  ["adaptive_policy_version_id", "adaptive_policy"],
  ["report_template_version_id", "report_template"],
] as const;
export type ComponentField = (typeof COMPONENT_FIELDS)[number][0];

export type BundleRow = Record<ComponentField, string> & {
  id: string;
  app_id: string;
  name: string;
  status: string;
  fingerprint: string;
  revision: number;
  created_by_user_id: string | null;
  created_at: Date;
  published_at: Date | null;
};

export const DEFINITION_COLUMNS = `id, template_id, app_id, business_id, locale, name, kind, content, content_hash,
  revision, created_by_user_id, created_at, published_at`;
export const BUNDLE_COLUMNS = `id, app_id, name, status, fingerprint, revision, ${COMPONENT_FIELDS.map(([field]) => field).join(", ")},
  created_by_user_id, created_at, published_at`;

export function definitionMessage(row: DefinitionRow): Definition {
  return create(DefinitionSchema, {
    id: row.id,
    appId: row.app_id,
    templateId: row.template_id,
    businessId: row.business_id,
    content: row.content,
    contentHash: row.content_hash,
    locale: row.locale,
    name: row.name,
    revision: row.revision,
    createdAt: timestampFromDate(row.created_at),
    createdByUserId: row.created_by_user_id ?? undefined,
    publishedAt: row.published_at ? timestampFromDate(row.published_at) : undefined,
  });
}

export function templateMessage(row: TemplateRow, definitions: DefinitionRow[]): Template {
  return create(TemplateSchema, {
    id: row.id,
    appId: row.app_id,
    name: row.name,
    createdAt: timestampFromDate(row.created_at),
    definitions: definitions.map(definitionMessage),
  });
}

export function bundleMessage(row: BundleRow): Bundle {
  return create(BundleSchema, {
    id: row.id,
    appId: row.app_id,
    name: row.name,
    fingerprint: row.fingerprint,
    revision: row.revision,
    status: row.status,
    components: create(ComponentVersionsSchema, {
      scorecardVersionId: row.scorecard_version_id,
      experienceVersionId: row.experience_version_id,
      contextVersionId: row.context_version_id,
      guardrailVersionId: row.guardrail_version_id,
      adaptivePolicyVersionId: row.adaptive_policy_version_id,
      reportTemplateVersionId: row.report_template_version_id,
    }),
    createdAt: timestampFromDate(row.created_at),
    createdByUserId: row.created_by_user_id ?? undefined,
    publishedAt: row.published_at ? timestampFromDate(row.published_at) : undefined,
  });
}

import { COMPONENT_SCHEMAS } from "@evalp/components";
import type { Bundle } from "@evalp/proto/platform/v1/bundle";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { callOptions } from "../../http/call.js";
import { pageBody, pageRequest } from "../../http/paging.js";
import { iso } from "../../http/timestamps.js";
import { StringEnum } from "../../validation/request-validator.js";
import type { RouteDeps } from "../deps.js";
import {
  AppParams,
  COMMON_ERRORS,
  DateTime,
  ErrorBody,
  IdempotentHeaders,
  OptionalIdempotencyHeaders,
  Page,
  PageQuery,
  Uuid,
} from "../schemas.js";
import { APP, type AppPath, appRef } from "./app.js";

const STATUSES = ["draft", "validated", "published", "deprecated", "archived"] as const;

const COMPONENT_FIELDS = [
  ["scorecard_version_id", "scorecardVersionId"],
  ["experience_version_id", "experienceVersionId"],
  ["context_version_id", "contextVersionId"],
  ["guardrail_version_id", "guardrailVersionId"],
  ["adaptive_policy_version_id", "adaptivePolicyVersionId"],
  ["report_template_version_id", "reportTemplateVersionId"],
] as const;

const BundleBody = Type.Object(
  {
    id: Uuid,
    app_id: Uuid,
    name: Type.String(),
    status: StringEnum(STATUSES),
    fingerprint: Type.String(),
    revision: Type.Integer(),
    ...Object.fromEntries(COMPONENT_FIELDS.map(([field]) => [field, Uuid])),
    created_at: DateTime,
    created_by_user_id: Type.Optional(Uuid),
    published_at: Type.Optional(DateTime),
  },
  { title: "Bundle" },
);

function bundleJson(bundle: Bundle | undefined) {
  if (!bundle) throw new Error("upstream returned no bundle");
  const components = bundle.components;
  return {
    id: bundle.id,
    app_id: bundle.appId,
    name: bundle.name,
    status: bundle.status,
    fingerprint: bundle.fingerprint,
    revision: bundle.revision,
    ...Object.fromEntries(COMPONENT_FIELDS.map(([field, proto]) => [field, components?.[proto] ?? ""])),
    created_at: iso(bundle.createdAt),
    ...(bundle.createdByUserId ? { created_by_user_id: bundle.createdByUserId } : {}),
    ...(bundle.publishedAt ? { published_at: iso(bundle.publishedAt) } : {}),
  };
}

const BundleParams = Type.Composite([AppParams, Type.Object({ bundle_id: Type.String() })]);
const FreeObject = Type.Record(Type.String(), Type.Unknown());
const tags = ["platform"];

/** #8 list, get, create, #9 status and #10 preview of bundles. */
export function bundleRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const bundles = deps.upstreams.platform.bundles;
  // The six component contents are published in the OpenAPI document (contract §7b).
  for (const schema of Object.values(COMPONENT_SCHEMAS)) app.addSchema({ ...schema, $id: schema.title });

  app.post(
    `${APP}/bundles`,
    {
      config: { access: { auth: "operator", scope: "bundles:write", idempotency: "required" } },
      schema: {
        tags,
        summary: "Create a draft bundle of six component versions",
        params: AppParams,
        headers: IdempotentHeaders,
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 200 }),
            ...Object.fromEntries(COMPONENT_FIELDS.map(([field]) => [field, Uuid])),
          },
          { additionalProperties: false },
        ),
        response: { 201: BundleBody, ...COMMON_ERRORS },
      },
    },
    async (request, reply) => {
      const body = request.body as Record<string, string> & { name: string };
      const answer = await bundles.createBundle(
        {
          app: appRef(request.params as AppPath),
          name: body.name,
          components: Object.fromEntries(COMPONENT_FIELDS.map(([field, proto]) => [proto, body[field]])),
          createdByUserId: request.access?.principal.userId ?? undefined,
        },
        callOptions(request),
      );
      return reply.code(201).send(bundleJson(answer.bundle));
    },
  );

  app.get(
    `${APP}/bundles`,
    {
      config: { access: { auth: "operator", scope: "bundles:read" } },
      schema: {
        tags,
        summary: "List bundles, newest first, optionally of one status",
        params: AppParams,
        querystring: Type.Composite([
          PageQuery,
          Type.Object({ status: Type.Optional(StringEnum(STATUSES)) }),
        ]),
        response: { 200: Page(BundleBody, "BundlePage"), ...COMMON_ERRORS },
      },
    },
    async (request) => {
      const query = request.query as { limit?: number; cursor?: string; status?: string };
      const page = pageRequest(request, deps.cursors, query);
      const answer = await bundles.listBundles(
        { app: appRef(request.params as AppPath), page, status: query.status },
        callOptions(request),
      );
      return pageBody(request, deps.cursors, answer.items.map(bundleJson), answer.page);
    },
  );

  app.get(
    `${APP}/bundles/:bundle_id`,
    {
      config: { access: { auth: "operator", scope: "bundles:read" } },
      schema: {
        tags,
        summary: "Get a bundle",
        params: BundleParams,
        response: { 200: BundleBody, ...COMMON_ERRORS },
      },
    },
    async (request) => {
      const params = request.params as AppPath & { bundle_id: string };
      const answer = await bundles.getBundle(
        { app: appRef(params), bundleId: params.bundle_id },
        callOptions(request),
      );
      return bundleJson(answer.bundle);
    },
  );

  app.post(
    `${APP}/bundles/:bundle_id/status`,
    {
      config: { access: { auth: "operator", scope: "bundles:write", idempotency: "required" } },
      schema: {
        tags,
        summary: "Move a bundle to another status (validating it on the way to `validated`)",
        params: BundleParams,
        headers: IdempotentHeaders,
        body: Type.Object({ status: StringEnum(STATUSES) }, { additionalProperties: false }),
        response: { 200: BundleBody, 409: ErrorBody, ...COMMON_ERRORS },
      },
    },
    async (request) => {
      const params = request.params as AppPath & { bundle_id: string };
      const { status } = request.body as { status: string };
      const answer = await bundles.changeBundleStatus(
        { app: appRef(params), bundleId: params.bundle_id, status },
        callOptions(request),
      );
      return bundleJson(answer.bundle);
    },
  );

  app.post(
    `${APP}/bundles/:bundle_id/preview`,
    {
      // Preview writes nothing, so it takes no Idempotency-Key (contract §4), though one is honoured.
      config: { access: { auth: "operator", scope: "bundles:read", idempotency: "optional" } },
      schema: {
        tags,
        summary: "Run the bundle's scorecard against sample answers: report and trace",
        params: BundleParams,
        headers: OptionalIdempotencyHeaders,
        body: Type.Object(
          {
            answers: FreeObject,
            context: FreeObject,
            respondent_id: Type.String({ minLength: 1, maxLength: 255 }),
            signals: FreeObject,
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({ report: FreeObject, trace: FreeObject }, { title: "BundlePreview" }),
          ...COMMON_ERRORS,
        },
      },
    },
    async (request) => {
      const params = request.params as AppPath & { bundle_id: string };
      const body = request.body as {
        answers: Record<string, never>;
        context: Record<string, never>;
        respondent_id: string;
        signals: Record<string, never>;
      };
      const answer = await bundles.previewBundle(
        {
          app: appRef(params),
          bundleId: params.bundle_id,
          answers: body.answers,
          context: body.context,
          respondentId: body.respondent_id,
          signals: body.signals,
        },
        callOptions(request),
      );
      return { report: answer.report ?? {}, trace: answer.trace ?? {} };
    },
  );
}

import { Type } from "@sinclair/typebox";
import { pageOf } from "../../http/paging.js";
import { StringEnum } from "../../validation/request-validator.js";
import type { RouteDeps } from "../deps.js";
import { type Api, route } from "../route.js";
import { AppParams, Page, PageQuery, ref } from "../schemas.js";
import { FreeObject } from "../wire.js";
import { type AppPath, appRef, authoredBy } from "./app.js";
import {
  BUNDLE_STATUSES,
  Bundle,
  BundlePreview,
  bundleJson,
  COMPONENT_FIELDS,
  ComponentVersionIds,
} from "./wire.js";

const TAG = "platform";

const BundleParams = Type.Composite([AppParams, Type.Object({ bundle_id: Type.String() })]);

/** The bundle a path names, as the bundle RPCs take it. */
function bundleRef(params: AppPath & { bundle_id: string }) {
  return { app: appRef(params), bundleId: params.bundle_id };
}

/** `APP/bundles`: create, #8 list, get, #9 status and #10 preview. */
export async function bundleRoutes(app: Api, deps: RouteDeps): Promise<void> {
  const bundles = deps.upstreams.platform.bundles;

  route(app, TAG, {
    method: "POST",
    url: "/bundles",
    operationId: "createBundle",
    summary: "Create a bundle",
    description:
      "Creates a `draft` bundle of six component versions: each `*_version_id` is a definition revision " +
      "of this app whose content's kind fits the field (422 `component_kind_mismatch` otherwise; 404 with " +
      "`context.field` for one of another app). `revision` counts the app's bundles of that name; " +
      "`fingerprint` hashes the six content hashes. Requires `bundles:write` and an Idempotency-Key.",
    access: { auth: "operator", scope: "bundles:write", idempotency: "required" },
    params: AppParams,
    body: Type.Object(
      { name: Type.String({ minLength: 1, maxLength: 200 }), ...ComponentVersionIds },
      { additionalProperties: false },
    ),
    status: 201,
    response: ref(Bundle),
    responseDescription: "The bundle, created as a draft.",
    handler: async ({ request, call }) => {
      // The six version ids, read by their field names.
      const body: Record<string, string> = request.body;
      const answer = await bundles.createBundle(
        {
          app: appRef(request.params),
          name: request.body.name,
          components: Object.fromEntries(COMPONENT_FIELDS.map(([field, proto]) => [proto, body[field]])),
          ...authoredBy(request),
        },
        call,
      );
      return bundleJson(answer.bundle);
    },
  });

  route(app, TAG, {
    method: "GET",
    url: "/bundles",
    operationId: "listBundles",
    summary: "List bundles",
    description:
      "The app's bundles, newest first, a page at a time (docs/paging.md), optionally only those of one " +
      "`status`. Requires `bundles:read`.",
    access: { auth: "operator", scope: "bundles:read" },
    params: AppParams,
    querystring: Type.Composite([
      PageQuery,
      Type.Object({ status: Type.Optional(StringEnum(BUNDLE_STATUSES)) }),
    ]),
    response: Page(Bundle, "BundlePage"),
    responseDescription: "A page of bundles.",
    handler: ({ request, call }) =>
      pageOf(
        request,
        deps.cursors,
        (page) =>
          bundles.listBundles({ app: appRef(request.params), page, status: request.query.status }, call),
        bundleJson,
      ),
  });

  route(app, TAG, {
    method: "GET",
    url: "/bundles/:bundle_id",
    operationId: "getBundle",
    summary: "Get a bundle",
    description: "One bundle of the app, with its status. Requires `bundles:read`.",
    access: { auth: "operator", scope: "bundles:read" },
    params: BundleParams,
    response: ref(Bundle),
    responseDescription: "The bundle.",
    handler: async ({ request, call }) =>
      bundleJson((await bundles.getBundle(bundleRef(request.params), call)).bundle),
  });

  route(app, TAG, {
    method: "POST",
    url: "/bundles/:bundle_id/status",
    operationId: "changeBundleStatus",
    summary: "Change a bundle's status",
    description:
      "Moves the bundle to `status`. Allowed moves: draft → validated or archived; validated → published, " +
      "draft or archived; published → deprecated; deprecated → published or archived. Any other (the same " +
      "status included) is 409 `invalid_transition`. Entering `validated` checks the six contents and " +
      "compiles every expression (422 `bundle_invalid`); the first publish sets `published_at`. Emits " +
      "`bundle.status_changed` in every environment of the app. Requires `bundles:write` and an " +
      "Idempotency-Key.",
    access: { auth: "operator", scope: "bundles:write", idempotency: "required" },
    params: BundleParams,
    body: Type.Object({ status: StringEnum(BUNDLE_STATUSES) }, { additionalProperties: false }),
    response: ref(Bundle),
    responseDescription: "The bundle in its new status.",
    errors: [409],
    handler: async ({ request, call }) => {
      const answer = await bundles.changeBundleStatus(
        { ...bundleRef(request.params), status: request.body.status },
        call,
      );
      return bundleJson(answer.bundle);
    },
  });

  route(app, TAG, {
    method: "POST",
    url: "/bundles/:bundle_id/preview",
    operationId: "previewBundle",
    summary: "Preview a bundle",
    description:
      "Runs the bundle's scorecard against sample `answers`, `context` and `signals` and answers its " +
      "report and trace; writes nothing. Not for an `archived` bundle (409 `invalid_transition`); a " +
      "malformed expression is 422 `expression_invalid`. Requires `bundles:read`; an Idempotency-Key is " +
      "honoured but not needed.",
    // Preview writes nothing, so it takes no Idempotency-Key (docs/idempotency.md), though one is honoured.
    access: { auth: "operator", scope: "bundles:read", idempotency: "optional" },
    params: BundleParams,
    body: Type.Object(
      {
        answers: FreeObject,
        context: FreeObject,
        respondent_id: Type.String({ minLength: 1, maxLength: 255 }),
        signals: FreeObject,
      },
      { additionalProperties: false },
    ),
    response: ref(BundlePreview),
    responseDescription: "The preview's report and trace.",
    errors: [409],
    handler: async ({ request, call }) => {
      const { body } = request;
      const answer = await bundles.previewBundle(
        {
          ...bundleRef(request.params),
          answers: body.answers,
          context: body.context,
          respondentId: body.respondent_id,
          signals: body.signals,
        },
        call,
      );
      return { report: answer.report ?? {}, trace: answer.trace ?? {} };
    },
  });
}

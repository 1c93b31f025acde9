import { Type } from "@sinclair/typebox";
import { StringEnum } from "../../validation/request-validator.js";
import type { RouteDeps } from "../deps.js";
import { resources } from "../resource.js";
import { type Api, route } from "../route.js";
import { Name, ref } from "../schemas.js";
import { FreeObject } from "../wire.js";
import { PLATFORM } from "./plane.js";
import type { APP_PREFIX } from "./requests.js";
import { appRef, authoredBy, bundleRef } from "./requests.js";
import {
  BUNDLE_STATUSES,
  Bundle,
  BundlePreview,
  bundleJson,
  COMPONENT_FIELDS,
  ComponentVersionIds,
} from "./wire.js";

/** `APP/bundles`: create, #8 list, get, #9 status and #10 preview. */
export async function bundleRoutes(app: Api<typeof APP_PREFIX>, deps: RouteDeps): Promise<void> {
  const bundles = deps.upstreams.platform.bundles;
  const { filteredList, read } = resources(app, PLATFORM, deps.cursors);

  route(app, PLATFORM, "createBundle", "POST /bundles", {
    access: { auth: "operator", scope: "bundles:write", idempotency: "required" },
    body: Type.Object({ name: Name, ...ComponentVersionIds }, { additionalProperties: false }),
    status: 201,
    response: ref(Bundle),
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

  filteredList(
    "listBundles",
    "GET /bundles",
    "bundles:read",
    { item: Bundle, filters: { status: Type.Optional(StringEnum(BUNDLE_STATUSES)) }, json: bundleJson },
    ({ params, query }, page, call) =>
      bundles.listBundles({ app: appRef(params), page, status: query.status }, call),
  );

  read("getBundle", "GET /bundles/:bundle_id", "bundles:read", Bundle, {
    rpc: ({ params }, call) => bundles.getBundle(bundleRef(params), call),
    json: (answer) => bundleJson(answer.bundle),
  });

  route(app, PLATFORM, "changeBundleStatus", "POST /bundles/:bundle_id/status", {
    access: { auth: "operator", scope: "bundles:write", idempotency: "required" },
    body: Type.Object({ status: StringEnum(BUNDLE_STATUSES) }, { additionalProperties: false }),
    response: ref(Bundle),
    errors: [409],
    handler: async ({ request, call }) => {
      const answer = await bundles.changeBundleStatus(
        { ...bundleRef(request.params), status: request.body.status },
        call,
      );
      return bundleJson(answer.bundle);
    },
  });

  route(app, PLATFORM, "previewBundle", "POST /bundles/:bundle_id/preview", {
    // Preview writes nothing, so it takes no Idempotency-Key (docs/idempotency.md), though one is honoured.
    access: { auth: "operator", scope: "bundles:read", idempotency: "optional" },
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
    errors: [409],
    errorMeanings: {
      413: "The body is larger than 1 MiB, or `answers`, `context` and `signals` together are larger than the preview's limit (256 KiB by default; `context.limit`, `context.size`).",
    },
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

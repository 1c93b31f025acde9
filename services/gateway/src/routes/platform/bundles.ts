import { Type } from "@sinclair/typebox";
import { StringEnum } from "../../validation/request-validator.js";
import type { RouteDeps } from "../deps.js";
import { byPath, reads, route, writes } from "../index.js";
import { FreeObject, Name, pageOfItems, pageQuery, ref } from "../wire.js";
import type { PlatformApi } from "./index.js";
import {
  type APP_PREFIX,
  appRef,
  authoredBy,
  BUNDLE_STATUSES,
  Bundle,
  BundlePreview,
  bundleJson,
  bundleRef,
  COMPONENT_FIELDS,
  ComponentVersionIds,
} from "./wire.js";

/** `APP/bundles`: create, #8 list, get, #9 status and #10 preview. */
export function bundleRoutes(app: PlatformApi<typeof APP_PREFIX>, deps: RouteDeps): void {
  const bundles = deps.upstreams.platform.bundles;
  route(app, "createBundle", "POST /bundles", writes("bundles:write"), {
    body: Type.Object({ name: Name, ...ComponentVersionIds }, { additionalProperties: false }),
    answer: ref(Bundle),
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

  route(app, "listBundles", "GET /bundles", reads("bundles:read"), {
    query: pageQuery({ status: Type.Optional(StringEnum(BUNDLE_STATUSES)) }),
    answer: pageOfItems(Bundle),
    list: ({ params, query }, page, call) =>
      bundles.listBundles({ app: appRef(params), page, status: query.status }, call),
    item: bundleJson,
  });

  route(app, "getBundle", "GET /bundles/:bundle_id", reads("bundles:read"), {
    answer: ref(Bundle),
    ...byPath(bundles.getBundle, bundleRef, (answer) => bundleJson(answer.bundle)),
  });

  route(app, "changeBundleStatus", "POST /bundles/:bundle_id/status", writes("bundles:write"), {
    body: Type.Object({ status: StringEnum(BUNDLE_STATUSES) }, { additionalProperties: false }),
    answer: ref(Bundle),
    handler: async ({ request, call }) => {
      const answer = await bundles.changeBundleStatus(
        { ...bundleRef(request.params), status: request.body.status },
        call,
      );
      return bundleJson(answer.bundle);
    },
  });

  // Preview writes nothing, so it takes no Idempotency-Key (docs/idempotency.md), though one is honoured.
  route(app, "previewBundle", "POST /bundles/:bundle_id/preview", reads("bundles:read", "optional"), {
    body: Type.Object(
      {
        answers: FreeObject,
        context: FreeObject,
        respondent_id: Type.String({ minLength: 1, maxLength: 255 }),
        signals: FreeObject,
      },
      { additionalProperties: false },
    ),
    answer: ref(BundlePreview),
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

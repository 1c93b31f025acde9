import { Type } from "@sinclair/typebox";
import { pageOf } from "../../http/paging.js";
import type { RouteDeps } from "../deps.js";
import { type Api, route } from "../route.js";
import { AppParams, OrgParams, Page, PageQuery, ref } from "../schemas.js";
import { CONTROL } from "./plane.js";
import { Application, appJson, EnvironmentBody, environmentJson, Slug } from "./wire.js";

/** `ORG/apps` and `APP/environments` (docs/endpoints.md): an organization's apps and their environments. */
export async function appRoutes(app: Api, deps: RouteDeps): Promise<void> {
  const organizations = deps.upstreams.organizations;

  route(app, CONTROL, {
    at: "POST /organizations/:organization_id/apps",
    operationId: "createApp",
    access: { auth: "operator", scope: "apps:write", idempotency: "required" },
    params: OrgParams,
    body: Type.Object(
      {
        slug: Slug,
        name: Type.String({ minLength: 1, maxLength: 200 }),
        description: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
      },
      { additionalProperties: false },
    ),
    status: 201,
    response: ref(Application),
    errors: [409],
    handler: async ({ request, call }) => {
      const { body } = request;
      const answer = await organizations.createApp(
        {
          organizationId: request.params.organization_id,
          slug: body.slug,
          name: body.name,
          description: body.description ?? undefined,
        },
        call,
      );
      return appJson(answer.app);
    },
  });

  route(app, CONTROL, {
    at: "GET /organizations/:organization_id/apps",
    operationId: "listApps",
    access: { auth: "operator", scope: "org:read" },
    params: OrgParams,
    querystring: PageQuery,
    response: Page(Application, "AppPage"),
    handler: ({ request, call }) =>
      pageOf(
        request,
        deps.cursors,
        (page) => organizations.listApps({ organizationId: request.params.organization_id, page }, call),
        appJson,
      ),
  });

  route(app, CONTROL, {
    at: "GET /organizations/:organization_id/apps/:app_id",
    operationId: "getApp",
    access: { auth: "operator", scope: "org:read" },
    params: AppParams,
    response: ref(Application),
    handler: async ({ request, call }) => {
      const { organization_id, app_id } = request.params;
      const answer = await organizations.getApp({ organizationId: organization_id, appId: app_id }, call);
      return appJson(answer.app);
    },
  });

  route(app, CONTROL, {
    at: "POST /organizations/:organization_id/apps/:app_id/environments",
    operationId: "createEnvironment",
    access: { auth: "operator", scope: "apps:write", idempotency: "required" },
    params: AppParams,
    body: Type.Object(
      { slug: Slug, name: Type.String({ minLength: 1, maxLength: 200 }) },
      { additionalProperties: false },
    ),
    status: 201,
    response: ref(EnvironmentBody),
    errors: [409],
    handler: async ({ request, call }) => {
      const { organization_id, app_id } = request.params;
      const answer = await organizations.createEnvironment(
        { organizationId: organization_id, appId: app_id, slug: request.body.slug, name: request.body.name },
        call,
      );
      return environmentJson(answer.environment);
    },
  });

  route(app, CONTROL, {
    at: "GET /organizations/:organization_id/apps/:app_id/environments",
    operationId: "listEnvironments",
    access: { auth: "operator", scope: "org:read" },
    params: AppParams,
    querystring: PageQuery,
    response: Page(EnvironmentBody, "EnvironmentPage"),
    handler: ({ request, call }) => {
      const { organization_id, app_id } = request.params;
      return pageOf(
        request,
        deps.cursors,
        (page) =>
          organizations.listEnvironments({ organizationId: organization_id, appId: app_id, page }, call),
        environmentJson,
      );
    },
  });
}

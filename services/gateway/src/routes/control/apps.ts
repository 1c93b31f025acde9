import { Type } from "@sinclair/typebox";
import { pageOf } from "../../http/paging.js";
import type { RouteDeps } from "../deps.js";
import { type Api, route } from "../route.js";
import { Page, PageQuery, ref } from "../schemas.js";
import { CONTROL } from "./plane.js";
import { Application, appJson, EnvironmentBody, environmentJson, Slug } from "./wire.js";

/** `ORG/apps` and `APP/environments` (docs/endpoints.md): an organization's apps and their environments. */
export async function appRoutes(app: Api<"/v1">, deps: RouteDeps): Promise<void> {
  const organizations = deps.upstreams.organizations;

  route(app, CONTROL, "createApp", "POST /organizations/:organization_id/apps", {
    access: { auth: "operator", scope: "apps:write", idempotency: "required" },
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

  route(app, CONTROL, "listApps", "GET /organizations/:organization_id/apps", {
    access: { auth: "operator", scope: "org:read" },
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

  route(app, CONTROL, "getApp", "GET /organizations/:organization_id/apps/:app_id", {
    access: { auth: "operator", scope: "org:read" },
    response: ref(Application),
    handler: async ({ request, call }) => {
      const { organization_id, app_id } = request.params;
      const answer = await organizations.getApp({ organizationId: organization_id, appId: app_id }, call);
      return appJson(answer.app);
    },
  });

  route(app, CONTROL, "createEnvironment", "POST /organizations/:organization_id/apps/:app_id/environments", {
    access: { auth: "operator", scope: "apps:write", idempotency: "required" },
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

  route(app, CONTROL, "listEnvironments", "GET /organizations/:organization_id/apps/:app_id/environments", {
    access: { auth: "operator", scope: "org:read" },
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

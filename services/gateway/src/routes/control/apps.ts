import { Type } from "@sinclair/typebox";
import { pageOf } from "../../http/paging.js";
import type { RouteDeps } from "../deps.js";
import { type Api, route } from "../route.js";
import { AppParams, OrgParams, Page, PageQuery, ref } from "../schemas.js";
import { Application, appJson, EnvironmentBody, environmentJson, Slug } from "./wire.js";

const TAG = "control";

/** `ORG/apps` and `APP/environments` (docs/endpoints.md): an organization's apps and their environments. */
export async function appRoutes(app: Api, deps: RouteDeps): Promise<void> {
  const organizations = deps.upstreams.organizations;

  route(app, TAG, {
    method: "POST",
    url: "/organizations/:organization_id/apps",
    operationId: "createApp",
    summary: "Create an app",
    description:
      "Creates an app in the organization. Its slug is unique within the organization (409 " +
      "`already_exists` otherwise). Requires `apps:write` and an Idempotency-Key.",
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
    responseDescription: "The app, created.",
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

  route(app, TAG, {
    method: "GET",
    url: "/organizations/:organization_id/apps",
    operationId: "listApps",
    summary: "List apps",
    description:
      "The organization's apps, newest first, a page at a time (docs/paging.md). Requires `org:read`.",
    access: { auth: "operator", scope: "org:read" },
    params: OrgParams,
    querystring: PageQuery,
    response: Page(Application, "AppPage"),
    responseDescription: "A page of apps.",
    handler: ({ request, call }) =>
      pageOf(
        request,
        deps.cursors,
        (page) => organizations.listApps({ organizationId: request.params.organization_id, page }, call),
        appJson,
      ),
  });

  route(app, TAG, {
    method: "GET",
    url: "/organizations/:organization_id/apps/:app_id",
    operationId: "getApp",
    summary: "Get an app",
    description: "One app of the organization. Requires `org:read`.",
    access: { auth: "operator", scope: "org:read" },
    params: AppParams,
    response: ref(Application),
    responseDescription: "The app.",
    handler: async ({ request, call }) => {
      const { organization_id, app_id } = request.params;
      const answer = await organizations.getApp({ organizationId: organization_id, appId: app_id }, call);
      return appJson(answer.app);
    },
  });

  route(app, TAG, {
    method: "POST",
    url: "/organizations/:organization_id/apps/:app_id/environments",
    operationId: "createEnvironment",
    summary: "Create an environment",
    description:
      "Creates an environment of the app, with the default quotas. Its slug is unique within the " +
      "app (409 `already_exists` otherwise). Requires `apps:write` and an Idempotency-Key.",
    access: { auth: "operator", scope: "apps:write", idempotency: "required" },
    params: AppParams,
    body: Type.Object(
      { slug: Slug, name: Type.String({ minLength: 1, maxLength: 200 }) },
      { additionalProperties: false },
    ),
    status: 201,
    response: ref(EnvironmentBody),
    responseDescription: "The environment, created.",
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

  route(app, TAG, {
    method: "GET",
    url: "/organizations/:organization_id/apps/:app_id/environments",
    operationId: "listEnvironments",
    summary: "List environments",
    description:
      "The app's environments, newest first, a page at a time (docs/paging.md). Requires `org:read`.",
    access: { auth: "operator", scope: "org:read" },
    params: AppParams,
    querystring: PageQuery,
    response: Page(EnvironmentBody, "EnvironmentPage"),
    responseDescription: "A page of environments.",
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

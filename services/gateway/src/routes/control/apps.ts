import { Type } from "@sinclair/typebox";
import type { RouteDeps } from "../deps.js";
import { resources } from "../resource.js";
import { type Api, route } from "../route.js";
import { Name, ref } from "../schemas.js";
import { CONTROL } from "./plane.js";
import { Application, appJson, EnvironmentBody, environmentJson, Slug } from "./wire.js";

/** `ORG/apps` and `APP/environments` (docs/endpoints.md): an organization's apps and their environments. */
export async function appRoutes(app: Api<"/v1">, deps: RouteDeps): Promise<void> {
  const organizations = deps.upstreams.organizations;
  const { list } = resources(app, CONTROL, deps.cursors);

  route(app, CONTROL, "createApp", "POST /organizations/:organization_id/apps", {
    access: { auth: "operator", scope: "apps:write", idempotency: "required" },
    body: Type.Object(
      {
        slug: Slug,
        name: Name,
        description: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
      },
      { additionalProperties: false },
    ),
    status: 201,
    response: ref(Application),
    errors: [409],
    rpc: ({ params, body }, call) =>
      organizations.createApp(
        {
          organizationId: params.organization_id,
          slug: body.slug,
          name: body.name,
          description: body.description ?? undefined,
        },
        call,
      ),
    json: (answer) => appJson(answer.app),
  });

  list("listApps", "GET /organizations/:organization_id/apps", {
    scope: "org:read",
    item: Application,
    rpc: ({ params }, page, call) =>
      organizations.listApps({ organizationId: params.organization_id, page }, call),
  });

  route(app, CONTROL, "getApp", "GET /organizations/:organization_id/apps/:app_id", {
    access: { auth: "operator", scope: "org:read" },
    response: ref(Application),
    rpc: ({ params }, call) =>
      organizations.getApp({ organizationId: params.organization_id, appId: params.app_id }, call),
    json: (answer) => appJson(answer.app),
  });

  route(app, CONTROL, "createEnvironment", "POST /organizations/:organization_id/apps/:app_id/environments", {
    access: { auth: "operator", scope: "apps:write", idempotency: "required" },
    body: Type.Object({ slug: Slug, name: Name }, { additionalProperties: false }),
    status: 201,
    response: ref(EnvironmentBody),
    errors: [409],
    rpc: ({ params, body }, call) =>
      organizations.createEnvironment(
        { organizationId: params.organization_id, appId: params.app_id, slug: body.slug, name: body.name },
        call,
      ),
    json: (answer) => environmentJson(answer.environment),
  });

  list("listEnvironments", "GET /organizations/:organization_id/apps/:app_id/environments", {
    scope: "org:read",
    item: EnvironmentBody,
    rpc: ({ params }, page, call) =>
      organizations.listEnvironments(
        { organizationId: params.organization_id, appId: params.app_id, page },
        call,
      ),
  });
}

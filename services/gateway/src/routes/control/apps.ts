import { Type } from "@sinclair/typebox";
import type { RouteDeps } from "../deps.js";
import { resources } from "../resource.js";
import { type Api, route } from "../route.js";
import { Name, ref } from "../schemas.js";
import { CONTROL } from "./plane.js";
import { type ORG_PREFIX, organizationRef } from "./requests.js";
import { Application, appJson, EnvironmentBody, environmentJson, Slug } from "./wire.js";

/** `ORG/apps` and `APP/environments` (docs/endpoints.md): an organization's apps and their environments. */
export async function appRoutes(app: Api<typeof ORG_PREFIX>, deps: RouteDeps): Promise<void> {
  const organizations = deps.upstreams.organizations;
  const { list, read } = resources(app, CONTROL, deps.cursors);

  route(app, CONTROL, "createApp", "POST /apps", {
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
          ...organizationRef(params),
          slug: body.slug,
          name: body.name,
          description: body.description ?? undefined,
        },
        call,
      ),
    json: (answer) => appJson(answer.app),
  });

  list("listApps", "GET /apps", "org:read", Application, ({ params }, page, call) =>
    organizations.listApps({ ...organizationRef(params), page }, call),
  );

  read("getApp", "GET /apps/:app_id", "org:read", Application, {
    rpc: ({ params }, call) =>
      organizations.getApp({ ...organizationRef(params), appId: params.app_id }, call),
    json: (answer) => appJson(answer.app),
  });

  route(app, CONTROL, "createEnvironment", "POST /apps/:app_id/environments", {
    access: { auth: "operator", scope: "apps:write", idempotency: "required" },
    body: Type.Object({ slug: Slug, name: Name }, { additionalProperties: false }),
    status: 201,
    response: ref(EnvironmentBody),
    errors: [409],
    rpc: ({ params, body }, call) =>
      organizations.createEnvironment(
        { ...organizationRef(params), appId: params.app_id, slug: body.slug, name: body.name },
        call,
      ),
    json: (answer) => environmentJson(answer.environment),
  });

  list(
    "listEnvironments",
    "GET /apps/:app_id/environments",
    "org:read",
    EnvironmentBody,
    ({ params }, page, call) =>
      organizations.listEnvironments({ ...organizationRef(params), appId: params.app_id, page }, call),
  );
}

import { Type } from "@sinclair/typebox";
import type { RouteDeps } from "../deps.js";
import { type Api, reads, route, writes } from "../index.js";
import { Name, pageOfItems, ref } from "../wire.js";
import { CONTROL } from "./index.js";
import {
  Application,
  appJson,
  EnvironmentBody,
  environmentJson,
  type ORG_PREFIX,
  organizationRef,
  Slug,
} from "./wire.js";

/** `ORG/apps` and `APP/environments` (docs/endpoints.md): an organization's apps and their environments. */
export async function appRoutes(app: Api<typeof ORG_PREFIX>, deps: RouteDeps): Promise<void> {
  const organizations = deps.upstreams.organizations;
  route(app, CONTROL, {
    id: "createApp",
    method: "POST",
    path: "/apps",
    access: writes("apps:write"),
    body: Type.Object(
      {
        slug: Slug,
        name: Name,
        description: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
      },
      { additionalProperties: false },
    ),
    status: 201,
    answer: ref(Application),
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

  route(app, CONTROL, {
    id: "listApps",
    method: "GET",
    path: "/apps",
    access: reads("org:read"),
    answer: pageOfItems(Application),
    list: ({ params }, page, call) => organizations.listApps({ ...organizationRef(params), page }, call),
    item: appJson,
  });

  route(app, CONTROL, {
    id: "getApp",
    method: "GET",
    path: "/apps/:app_id",
    access: reads("org:read"),
    answer: ref(Application),
    rpc: ({ params }, call) =>
      organizations.getApp({ ...organizationRef(params), appId: params.app_id }, call),
    json: (answer) => appJson(answer.app),
  });

  route(app, CONTROL, {
    id: "createEnvironment",
    method: "POST",
    path: "/apps/:app_id/environments",
    access: writes("apps:write"),
    body: Type.Object({ slug: Slug, name: Name }, { additionalProperties: false }),
    status: 201,
    answer: ref(EnvironmentBody),
    errors: [409],
    rpc: ({ params, body }, call) =>
      organizations.createEnvironment(
        { ...organizationRef(params), appId: params.app_id, slug: body.slug, name: body.name },
        call,
      ),
    json: (answer) => environmentJson(answer.environment),
  });

  route(app, CONTROL, {
    id: "listEnvironments",
    method: "GET",
    path: "/apps/:app_id/environments",
    access: reads("org:read"),
    answer: pageOfItems(EnvironmentBody),
    list: ({ params }, page, call) =>
      organizations.listEnvironments({ ...organizationRef(params), appId: params.app_id, page }, call),
    item: environmentJson,
  });
}

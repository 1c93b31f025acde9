import { Type } from "@sinclair/typebox";
import type { RouteDeps } from "../deps.js";
import { reads, route, writes } from "../index.js";
import { Name, pageOfItems, ref } from "../wire.js";
import type { ControlApi } from "./index.js";
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
export function appRoutes(app: ControlApi<typeof ORG_PREFIX>, deps: RouteDeps): void {
  const organizations = deps.upstreams.organizations;
  route(app, "createApp", "POST /apps", writes("apps:write"), {
    body: Type.Object(
      {
        slug: Slug,
        name: Name,
        description: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
      },
      { additionalProperties: false },
    ),
    answer: ref(Application),
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

  route(app, "listApps", "GET /apps", reads("org:read"), {
    answer: pageOfItems(Application),
    list: ({ params }, page, call) => organizations.listApps({ ...organizationRef(params), page }, call),
    item: appJson,
  });

  route(app, "getApp", "GET /apps/:app_id", reads("org:read"), {
    answer: ref(Application),
    rpc: ({ params }, call) =>
      organizations.getApp({ ...organizationRef(params), appId: params.app_id }, call),
    json: (answer) => appJson(answer.app),
  });

  route(app, "createEnvironment", "POST /apps/:app_id/environments", writes("apps:write"), {
    body: Type.Object({ slug: Slug, name: Name }, { additionalProperties: false }),
    answer: ref(EnvironmentBody),
    rpc: ({ params, body }, call) =>
      organizations.createEnvironment(
        { ...organizationRef(params), appId: params.app_id, slug: body.slug, name: body.name },
        call,
      ),
    json: (answer) => environmentJson(answer.environment),
  });

  route(app, "listEnvironments", "GET /apps/:app_id/environments", reads("org:read"), {
    answer: pageOfItems(EnvironmentBody),
    list: ({ params }, page, call) =>
      organizations.listEnvironments({ ...organizationRef(params), appId: params.app_id, page }, call),
    item: environmentJson,
  });
}

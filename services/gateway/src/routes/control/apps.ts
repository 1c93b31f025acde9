import type { App } from "@evalp/proto/control/v1/organization";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { callOptions } from "../../http/call.js";
import { pageBody, pageRequest } from "../../http/paging.js";
import { iso } from "../../http/timestamps.js";
import type { RouteDeps } from "../deps.js";
import {
  AppParams,
  COMMON_ERRORS,
  DateTime,
  ErrorBody,
  IdempotentHeaders,
  OrgParams,
  Page,
  PageQuery,
  Uuid,
} from "../schemas.js";

/** Slugs of apps and environments (contract §5b). */
export const Slug = Type.String({ pattern: "^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$" });

const Application = Type.Object(
  {
    id: Uuid,
    organization_id: Uuid,
    slug: Type.String(),
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    created_at: DateTime,
  },
  { title: "Application" },
);

function appJson(app: App | undefined) {
  if (!app) throw new Error("upstream returned no app");
  return {
    id: app.id,
    organization_id: app.organizationId,
    slug: app.slug,
    name: app.name,
    description: app.description ?? null,
    created_at: iso(app.createdAt),
  };
}

/** `POST ORG/apps`, `GET ORG/apps` (ApplicationPage) and #4 `GET APP`. */
export function appRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.post(
    "/v1/organizations/:organization_id/apps",
    {
      config: { access: { auth: "operator", scope: "apps:write", idempotency: "required" } },
      schema: {
        tags: ["control"],
        summary: "Create an app",
        params: OrgParams,
        headers: IdempotentHeaders,
        body: Type.Object(
          {
            slug: Slug,
            name: Type.String({ minLength: 1, maxLength: 200 }),
            description: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
          },
          { additionalProperties: false },
        ),
        response: { 201: Application, 409: ErrorBody, ...COMMON_ERRORS },
      },
    },
    async (request, reply) => {
      const { organization_id } = request.params as { organization_id: string };
      const body = request.body as { slug: string; name: string; description?: string | null };
      const answer = await deps.upstreams.organizations.createApp(
        {
          organizationId: organization_id,
          slug: body.slug,
          name: body.name,
          description: body.description ?? undefined,
        },
        callOptions(request),
      );
      return reply.code(201).send(appJson(answer.app));
    },
  );

  app.get(
    "/v1/organizations/:organization_id/apps",
    {
      config: { access: { auth: "operator", scope: "org:read" } },
      schema: {
        tags: ["control"],
        summary: "List apps, newest first",
        params: OrgParams,
        querystring: PageQuery,
        response: { 200: Page(Application, "ApplicationPage"), ...COMMON_ERRORS },
      },
    },
    async (request) => {
      const { organization_id } = request.params as { organization_id: string };
      const page = pageRequest(request, deps.cursors, request.query as { limit?: number; cursor?: string });
      const answer = await deps.upstreams.organizations.listApps(
        { organizationId: organization_id, page },
        callOptions(request),
      );
      return pageBody(request, deps.cursors, answer.items.map(appJson), answer.page);
    },
  );

  app.get(
    "/v1/organizations/:organization_id/apps/:app_id",
    {
      config: { access: { auth: "operator", scope: "org:read" } },
      schema: {
        tags: ["control"],
        summary: "Get an app",
        params: AppParams,
        response: { 200: Application, ...COMMON_ERRORS },
      },
    },
    async (request) => {
      const { organization_id, app_id } = request.params as { organization_id: string; app_id: string };
      const answer = await deps.upstreams.organizations.getApp(
        { organizationId: organization_id, appId: app_id },
        callOptions(request),
      );
      return appJson(answer.app);
    },
  );
}

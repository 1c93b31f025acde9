import type { Environment } from "@evalp/proto/control/v1/organization";
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
  Page,
  PageQuery,
  Uuid,
} from "../schemas.js";
import { Slug } from "./apps.js";

const EnvironmentBody = Type.Object(
  { id: Uuid, app_id: Uuid, slug: Type.String(), name: Type.String(), created_at: DateTime },
  { title: "Environment" },
);

function environmentJson(environment: Environment | undefined) {
  if (!environment) throw new Error("upstream returned no environment");
  return {
    id: environment.id,
    app_id: environment.appId,
    slug: environment.slug,
    name: environment.name,
    created_at: iso(environment.createdAt),
  };
}

/** `POST APP/environments` (creates its quotas) and `GET APP/environments`. */
export function environmentRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.post(
    "/v1/organizations/:organization_id/apps/:app_id/environments",
    {
      config: { access: { auth: "operator", scope: "apps:write", idempotency: "required" } },
      schema: {
        tags: ["control"],
        summary: "Create an environment",
        params: AppParams,
        headers: IdempotentHeaders,
        body: Type.Object(
          { slug: Slug, name: Type.String({ minLength: 1, maxLength: 200 }) },
          { additionalProperties: false },
        ),
        response: { 201: EnvironmentBody, 409: ErrorBody, ...COMMON_ERRORS },
      },
    },
    async (request, reply) => {
      const { organization_id, app_id } = request.params as { organization_id: string; app_id: string };
      const body = request.body as { slug: string; name: string };
      const answer = await deps.upstreams.organizations.createEnvironment(
        { organizationId: organization_id, appId: app_id, slug: body.slug, name: body.name },
        callOptions(request),
      );
      return reply.code(201).send(environmentJson(answer.environment));
    },
  );

  app.get(
    "/v1/organizations/:organization_id/apps/:app_id/environments",
    {
      config: { access: { auth: "operator", scope: "org:read" } },
      schema: {
        tags: ["control"],
        summary: "List environments, newest first",
        params: AppParams,
        querystring: PageQuery,
        response: { 200: Page(EnvironmentBody, "EnvironmentPage"), ...COMMON_ERRORS },
      },
    },
    async (request) => {
      const { organization_id, app_id } = request.params as { organization_id: string; app_id: string };
      const page = pageRequest(request, deps.cursors, request.query as { limit?: number; cursor?: string });
      const answer = await deps.upstreams.organizations.listEnvironments(
        { organizationId: organization_id, appId: app_id, page },
        callOptions(request),
      );
      return pageBody(request, deps.cursors, answer.items.map(environmentJson), answer.page);
    },
  );
}

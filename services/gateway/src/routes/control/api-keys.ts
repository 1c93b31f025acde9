import { AGENT_SCOPE, AppError, grants, SCOPES, type Scope } from "@evalp/kit";
import type { ApiKey } from "@evalp/proto/control/v1/api_key";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { callOptions } from "../../http/call.js";
import { pageBody, pageRequest } from "../../http/paging.js";
import { iso, isoOrNull } from "../../http/timestamps.js";
import { RequestValidationError } from "../../validation/json-body.js";
import { StringEnum } from "../../validation/request-validator.js";
import type { RouteDeps } from "../deps.js";
import { type EnvPath, environmentRef } from "../environment.js";
import { COMMON_ERRORS, DateTime, EnvParams, IdempotentHeaders, Page, PageQuery, Uuid } from "../schemas.js";

const ApiKeySummary = Type.Object(
  {
    id: Uuid,
    environment_id: Uuid,
    name: Type.String(),
    key_prefix: Type.String(),
    scopes: Type.Array(Type.String()),
    created_at: DateTime,
    revoked_at: Type.Union([DateTime, Type.Null()]),
  },
  { title: "ApiKeySummary" },
);

const CreateApiKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    scopes: Type.Array(StringEnum(SCOPES), { minItems: 1, maxItems: 32 }),
  },
  { additionalProperties: false },
);

function apiKeyJson(key: ApiKey | undefined) {
  if (!key) throw new Error("upstream returned no api key");
  return {
    id: key.id,
    environment_id: key.environmentId,
    name: key.name,
    key_prefix: key.keyPrefix,
    scopes: key.scopes,
    created_at: iso(key.createdAt),
    revoked_at: isoOrNull(key.revokedAt),
  };
}

/**
 * The scopes a new key may have: known ones, `interviews:agent` only alone (422), and none the
 * creator lacks (403), so a key can never widen what its creator can do (contract §3).
 */
function checkRequestedScopes(request: FastifyRequest, requested: Scope[]): Scope[] {
  const scopes = [...new Set(requested)];
  if (scopes.includes(AGENT_SCOPE) && scopes.length > 1) {
    const message = `${AGENT_SCOPE} is granted alone`;
    throw new RequestValidationError([
      {
        type: "value_error",
        loc: ["body", "scopes"],
        msg: `Value error, ${message}`,
        input: requested,
        ctx: { error: message },
      },
    ]);
  }
  const held = request.access?.scopes ?? [];
  const missing = scopes.find((scope) => !grants(held, scope));
  if (missing) {
    throw new AppError("forbidden", `A key cannot have ${missing}, which its creator lacks.`, {
      required_scope: missing,
    });
  }
  return scopes;
}

const ENV = "/v1/organizations/:organization_id/apps/:app_id/environments/:environment_id";

/** `POST/GET ENV/api-keys` and `POST ENV/api-keys/{key_id}/revoke`. */
export function apiKeyRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.post(
    `${ENV}/api-keys`,
    {
      config: { access: { auth: "operator", scope: "keys:write", idempotency: "required" } },
      schema: {
        tags: ["control"],
        summary: "Create an API key; its secret is shown in this response only",
        params: EnvParams,
        headers: IdempotentHeaders,
        body: CreateApiKeyBody,
        response: {
          201: Type.Composite([ApiKeySummary, Type.Object({ secret: Type.String() })]),
          ...COMMON_ERRORS,
        },
      },
    },
    async (request, reply) => {
      const params = request.params as EnvPath;
      const body = request.body as { name: string; scopes: Scope[] };
      const scopes = checkRequestedScopes(request, body.scopes);
      const answer = await deps.upstreams.apiKeys.createApiKey(
        {
          environment: environmentRef(params),
          name: body.name,
          scopes,
          createdByUserId: request.access?.principal.userId ?? undefined,
        },
        callOptions(request),
      );
      return reply.code(201).send({ ...apiKeyJson(answer.apiKey), secret: answer.secret });
    },
  );

  app.get(
    `${ENV}/api-keys`,
    {
      config: { access: { auth: "operator", scope: "keys:write" } },
      schema: {
        tags: ["control"],
        summary: "List API keys, newest first (never their secrets)",
        params: EnvParams,
        querystring: PageQuery,
        response: { 200: Page(ApiKeySummary, "ApiKeyPage"), ...COMMON_ERRORS },
      },
    },
    async (request) => {
      const params = request.params as EnvPath;
      const page = pageRequest(request, deps.cursors, request.query as { limit?: number; cursor?: string });
      const answer = await deps.upstreams.apiKeys.listApiKeys(
        { environment: environmentRef(params), page },
        callOptions(request),
      );
      return pageBody(request, deps.cursors, answer.items.map(apiKeyJson), answer.page);
    },
  );

  app.post(
    `${ENV}/api-keys/:key_id/revoke`,
    {
      config: {
        access: {
          auth: "operator",
          scope: "keys:write",
          idempotency: "required",
          changesPrincipals: { param: "key_id" },
        },
      },
      schema: {
        tags: ["control"],
        summary: "Revoke an API key at once",
        params: Type.Composite([EnvParams, Type.Object({ key_id: Type.String() })]),
        headers: IdempotentHeaders,
        response: { 200: ApiKeySummary, ...COMMON_ERRORS },
      },
    },
    async (request) => {
      const params = request.params as EnvPath & { key_id: string };
      const answer = await deps.upstreams.apiKeys.revokeApiKey(
        { environment: environmentRef(params), keyId: params.key_id },
        callOptions(request),
      );
      return apiKeyJson(answer.apiKey);
    },
  );
}

import { AGENT_SCOPE, AppError, grants, SCOPES, type Scope } from "@evalp/kit";
import { Type } from "@sinclair/typebox";
import { RequestValidationError } from "../../validation/json-body.js";
import { StringEnum } from "../../validation/request-validator.js";
import type { RouteDeps } from "../deps.js";
import { reads, route, writes } from "../index.js";
import { type ENV_PREFIX, environmentPage, environmentRef, pageOfItems, ref } from "../wire.js";
import type { ControlApi } from "./index.js";
import { ApiKeyCreated, ApiKeySummary, apiKeyJson } from "./wire.js";

/** A revoked key's principal is forgotten wherever it was cached. */
const REVOKES = { ...writes("keys:write"), changesPrincipals: { param: "key_id" } } as const;

const CreateApiKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    scopes: Type.Array(StringEnum(SCOPES), { minItems: 1, maxItems: 32 }),
  },
  { additionalProperties: false },
);

/**
 * The scopes a new key may have: known ones, `interviews:agent` only alone (422), and none the
 * creator lacks (403), so a key can never widen what its creator can do (docs/authentication.md).
 */
function checkRequestedScopes(held: string[], requested: Scope[]): Scope[] {
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
  const missing = scopes.find((scope) => !grants(held, scope));
  if (missing) {
    throw new AppError("forbidden", `A key cannot have ${missing}, which its creator lacks.`, {
      required_scope: missing,
    });
  }
  return scopes;
}

/** `POST/GET ENV/api-keys` and `POST ENV/api-keys/{key_id}/revoke` (under the ENV prefix). */
export function apiKeyRoutes(app: ControlApi<typeof ENV_PREFIX>, deps: RouteDeps): void {
  const apiKeys = deps.upstreams.apiKeys;
  route(app, "createApiKey", "POST /api-keys", writes("keys:write"), {
    body: CreateApiKeyBody,
    answer: ref(ApiKeyCreated),
    handler: async ({ request, call }) => {
      const scopes = checkRequestedScopes(request.access?.scopes ?? [], request.body.scopes);
      const answer = await apiKeys.createApiKey(
        {
          environment: environmentRef(request.params),
          name: request.body.name,
          scopes,
          createdByUserId: request.access?.principal.userId ?? undefined,
        },
        call,
      );
      return { ...apiKeyJson(answer.apiKey), secret: answer.secret };
    },
  });

  route(app, "listApiKeys", "GET /api-keys", reads("keys:write"), {
    answer: pageOfItems(ApiKeySummary),
    list: ({ params }, page, call) => apiKeys.listApiKeys(environmentPage(params, page), call),
    item: apiKeyJson,
  });

  route(app, "revokeApiKey", "POST /api-keys/:key_id/revoke", REVOKES, {
    answer: ref(ApiKeySummary),
    rpc: ({ params }, call) =>
      apiKeys.revokeApiKey({ environment: environmentRef(params), keyId: params.key_id }, call),
    json: (answer) => apiKeyJson(answer.apiKey),
  });
}

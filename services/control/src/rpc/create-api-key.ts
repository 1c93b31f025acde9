import { create } from "@bufbuild/protobuf";
import { newId } from "@evalp/kit";
import {
  type CreateApiKeyRequest,
  type CreateApiKeyResponse,
  CreateApiKeyResponseSchema,
} from "@evalp/proto/control/v1/api_key";
import { newApiKey, sha256 } from "../credentials.js";
import { API_KEY_COLUMNS, type ApiKeyRow, apiKeyMessage } from "../db/rows.js";
import { requireEnvironment } from "../db/scope.js";
import type { Deps } from "../deps.js";

/** Issues a key for the environment. The whole key is in this response only; only its hash is kept. */
export function createApiKey(deps: Deps) {
  return async (req: CreateApiKeyRequest): Promise<CreateApiKeyResponse> => {
    await requireEnvironment(deps.pool, req.environment);
    const key = newApiKey();
    const inserted = await deps.pool.query<ApiKeyRow>(
      `INSERT INTO api_keys (id, environment_id, name, key_prefix, secret_hash, scopes, created_by_user_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${API_KEY_COLUMNS}`,
      [
        newId(),
        req.environment?.environmentId,
        req.name,
        key.prefix,
        sha256(key.secret),
        req.scopes,
        req.createdByUserId ?? null,
      ],
    );
    return create(CreateApiKeyResponseSchema, {
      apiKey: apiKeyMessage(inserted.rows[0] as ApiKeyRow),
      secret: key.secret,
    });
  };
}

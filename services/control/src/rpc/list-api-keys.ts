import { create } from "@bufbuild/protobuf";
import { pageClause, pageResult } from "@evalp/kit";
import {
  type ListApiKeysRequest,
  type ListApiKeysResponse,
  ListApiKeysResponseSchema,
} from "@evalp/proto/control/v1/api_key";
import { API_KEY_COLUMNS, type ApiKeyRow, apiKeyMessage } from "../db/rows.js";
import { requireEnvironment } from "../db/scope.js";
import type { Deps } from "../deps.js";

/** The environment's keys (revoked ones included), newest first; never their secrets. */
export function listApiKeys(deps: Deps) {
  return async (req: ListApiKeysRequest): Promise<ListApiKeysResponse> => {
    await requireEnvironment(deps.pool, req.environment);
    const page = pageClause(req.page, 2);
    const found = await deps.pool.query<ApiKeyRow>(
      `SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE environment_id = $1 AND ${page.where} ${page.tail}`,
      [req.environment?.environmentId, ...page.params],
    );
    const { rows, info } = pageResult(found.rows, req.page);
    return create(ListApiKeysResponseSchema, { items: rows.map(apiKeyMessage), page: info });
  };
}

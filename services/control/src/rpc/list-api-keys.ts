import { create } from "@bufbuild/protobuf";
import { pageResult } from "@evalp/kit";
import {
  type ListApiKeysRequest,
  type ListApiKeysResponse,
  ListApiKeysResponseSchema,
} from "@evalp/proto/control/v1/api_key";
import { listApiKeyRows } from "../db/organizations.js";
import { apiKeyMessage } from "../db/rows.js";
import { requireEnvironment } from "../db/scope.js";
import type { Deps } from "../deps.js";

/** The environment's keys (revoked ones included), newest first; never their secrets. */
export function listApiKeys(deps: Deps) {
  return async (req: ListApiKeysRequest): Promise<ListApiKeysResponse> => {
    await requireEnvironment(deps.pool, req.environment);
    const found = await listApiKeyRows(deps.pool, req.environment?.environmentId, req.page);
    const { rows, info } = pageResult(found, req.page);
    return create(ListApiKeysResponseSchema, { items: rows.map(apiKeyMessage), page: info });
  };
}

import { create } from "@bufbuild/protobuf";
import { pageResult } from "@evalp/kit";
import {
  type ListEnvironmentsRequest,
  type ListEnvironmentsResponse,
  ListEnvironmentsResponseSchema,
} from "@evalp/proto/control/v1/organization";
import { listEnvironmentRows } from "../db/organizations.js";
import { environmentMessage } from "../db/rows.js";
import { requireApp } from "../db/scope.js";
import type { Deps } from "../deps.js";

/** The app's environments, newest first, one keyset page. */
export function listEnvironments(deps: Deps) {
  return async (req: ListEnvironmentsRequest): Promise<ListEnvironmentsResponse> => {
    await requireApp(deps.pool, req.organizationId, req.appId);
    const found = await listEnvironmentRows(deps.pool, req.appId, req.page);
    const { rows, info } = pageResult(found, req.page);
    return create(ListEnvironmentsResponseSchema, { items: rows.map(environmentMessage), page: info });
  };
}

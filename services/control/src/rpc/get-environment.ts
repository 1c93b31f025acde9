import { create } from "@bufbuild/protobuf";
import { notFound } from "@evalp/kit";
import {
  type GetEnvironmentRequest,
  type GetEnvironmentResponse,
  GetEnvironmentResponseSchema,
} from "@evalp/proto/control/v1/organization";
import { findEnvironment } from "../db/organizations.js";
import { environmentMessage } from "../db/rows.js";
import { requireEnvironment } from "../db/scope.js";
import type { Deps } from "../deps.js";

/**
 * The environment of a path, after checking the chain organization → app → environment. For the
 * planes that keep rows per environment but cannot read control's schema (webhooks): they ask
 * here before serving an ENV path, so a path that mixes organizations answers 404.
 */
export function getEnvironment(deps: Deps) {
  return async (req: GetEnvironmentRequest): Promise<GetEnvironmentResponse> => {
    await requireEnvironment(deps.pool, req.environment);
    const row = await findEnvironment(deps.pool, req.environment?.environmentId);
    if (!row) throw notFound("environment");
    return create(GetEnvironmentResponseSchema, { environment: environmentMessage(row) });
  };
}

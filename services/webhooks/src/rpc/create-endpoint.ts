import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { enforceQuota, forwardedCall, newId, withTransaction } from "@evalp/kit";
import {
  type CreateEndpointRequest,
  type CreateEndpointResponse,
  CreateEndpointResponseSchema,
} from "@evalp/proto/webhooks/v1/endpoint";
import { auditWebhooks } from "../audit.js";
import { countEndpoints, endpointMessage, insertEndpoint } from "../db/endpoints.js";
import type { Deps } from "../deps.js";
import { generateSecret, secretProblem } from "../secrets.js";
import { eventTypesOf, fieldError, requireTarget } from "../target.js";

/**
 * A new endpoint, counted against the environment's `webhook_endpoints` quota (kit
 * `enforceQuota`, the limit read from control). Its secret is in this response only, and stored
 * sealed.
 */
export function createEndpoint(deps: Deps) {
  return async (req: CreateEndpointRequest, ctx: HandlerContext): Promise<CreateEndpointResponse> => {
    const environmentId = await deps.requireEnvironmentId(req.environment, ctx);
    if (req.secret !== undefined) {
      const problem = secretProblem(req.secret);
      if (problem) throw fieldError("secret", req.secret, problem);
    }
    await requireTarget(deps, req.url);
    const secret = req.secret ?? generateSecret();
    const row = await withTransaction(deps.pool, async (tx) => {
      await enforceQuota(tx, {
        environmentId,
        counter: "webhook_endpoints",
        limit: async () => {
          const answer = await deps.control.quotas.getLimits({ environmentId }, forwardedCall(ctx));
          return Number(answer.limits?.webhookEndpoints ?? 0n);
        },
        usage: () => countEndpoints(tx, environmentId),
      });
      const id = newId();
      const endpoint = await insertEndpoint(tx, {
        id,
        environmentId,
        url: req.url,
        eventTypes: eventTypesOf(req.eventTypes),
        secret: deps.sealer.seal(id, secret),
        enabled: req.enabled,
      });
      await auditWebhooks(tx, ctx, req.environment, {
        action: "webhook_endpoint.created",
        resourceType: "webhook_endpoint",
        resourceId: endpoint.id,
        metadata: { url: endpoint.url, event_types: endpoint.event_types },
      });
      return endpoint;
    });
    return create(CreateEndpointResponseSchema, { endpoint: endpointMessage(row), secret });
  };
}

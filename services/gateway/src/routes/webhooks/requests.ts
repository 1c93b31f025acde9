import { type EnvPath, environmentRef } from "../environment.js";

/** The endpoint a path names, as every endpoint RPC takes it. */
export function endpointRef(params: EnvPath & { id: string }) {
  return { environment: environmentRef(params), endpointId: params.id };
}

/** The delivery a path names, as the delivery RPCs take it. */
export function deliveryRef(params: EnvPath & { delivery_id: string }) {
  return { environment: environmentRef(params), deliveryId: params.delivery_id };
}

/** The access of the endpoint routes that change something, and of those that read. */
export const WRITE = { auth: "operator", scope: "webhooks:write", idempotency: "required" } as const;
export const READ = { auth: "operator", scope: "webhooks:read" } as const;

import { type EnvPath, environmentRef } from "../environment.js";

/** The endpoint a path names, as every endpoint RPC takes it. */
export function endpointRef(params: EnvPath & { id: string }) {
  return { environment: environmentRef(params), endpointId: params.id };
}

/** The delivery a path names, as the delivery RPCs take it. */
export function deliveryRef(params: EnvPath & { delivery_id: string }) {
  return { environment: environmentRef(params), deliveryId: params.delivery_id };
}

import { ConnectError } from "@connectrpc/connect";
import { fromConnectError, type PydanticItem } from "@evalp/kit";
import { RequestValidationError } from "../../validation/json-body.js";

/**
 * Awaits an upstream call, turning the service's refusal of a field (a `validation_error` whose
 * context holds the Pydantic-shaped `detail`: a private target, a malformed secret) into the
 * contract's 422 validation body.
 */
export async function refusingFields<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof ConnectError) {
      const app = fromConnectError(error);
      if (app.code === "validation_error" && Array.isArray(app.context.detail)) {
        throw new RequestValidationError(app.context.detail as PydanticItem[]);
      }
    }
    throw error;
  }
}

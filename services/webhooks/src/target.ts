import { AppError } from "@evalp/kit";
import type { Deps } from "./deps.js";
import { checkTarget, TargetRefused } from "./ssrf.js";

/**
 * A request field the service refuses, in the validation error shape (docs/errors.md): the gateway turns
 * a `validation_error` whose context holds `detail` into the Pydantic-shaped 422 of that field.
 */
export function fieldError(field: string, input: unknown, message: string): AppError {
  return new AppError("validation_error", message, {
    detail: [
      {
        type: "value_error",
        loc: ["body", field],
        msg: `Value error, ${message}`,
        input,
        ctx: { error: message },
      },
    ],
  });
}

/**
 * Checks a URL a client gives as a target (docs/webhooks.md): https, and no private, loopback or
 * link-local address after resolution, unless private targets are allowed. A host that does not
 * resolve yet is accepted: every attempt checks again.
 */
export async function requireTarget(deps: Deps, url: string): Promise<void> {
  try {
    await checkTarget(url, deps.config.WEBHOOK_ALLOW_PRIVATE, deps.resolver);
  } catch (error) {
    if (error instanceof TargetRefused) {
      const message =
        error.message === "private address not allowed"
          ? "url resolves to a private, loopback or link-local address"
          : error.message;
      throw fieldError("url", url, message);
    }
  }
}

/** The event types of an endpoint, each once, in the order given. */
export function eventTypesOf(given: readonly string[]): string[] {
  return [...new Set(given)];
}

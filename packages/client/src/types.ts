import type { components, operations, paths, webhooks } from "./gen/openapi.js";

export type { components, operations, paths, webhooks };

/** The document's named schemas (`Schemas["App"]`, `Schemas["Bundle"]`, …). */
export type Schemas = components["schemas"];

/** Every `code` an application error can carry (docs/errors.md#codes). */
export type ErrorCode = Schemas["ApplicationError"]["detail"]["code"];

/** One item of a Pydantic-shaped validation error (422). */
export type ValidationProblem = Schemas["ValidationError"]["detail"][number];

/** Every event the platform delivers to webhook endpoints, discriminated by `type`. */
export type WebhookEvent = {
  [Type in keyof webhooks]: webhooks[Type]["post"]["requestBody"]["content"]["application/json"];
}[keyof webhooks];

/** The event type names (`subject.imported`, …). */
export type WebhookEventType = WebhookEvent["type"];

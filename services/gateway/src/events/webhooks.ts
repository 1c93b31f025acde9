import type { FastifyInstance } from "fastify";
import { EVENT_CATALOG, type EventType } from "./catalog.js";

/** The Standard Webhooks headers of every delivery attempt (docs/webhooks.md), as header parameters. */
const SIGNATURE_HEADERS = [
  {
    name: "webhook-id",
    in: "header",
    required: true,
    description: "The event's id, the same on every attempt: receivers deduplicate on it.",
    schema: { type: "string", format: "uuid" },
  },
  {
    name: "webhook-timestamp",
    in: "header",
    required: true,
    description: "When this attempt was signed, in unix seconds.",
    schema: { type: "string", pattern: "^[0-9]+$" },
  },
  {
    name: "webhook-signature",
    in: "header",
    required: true,
    description:
      '`v1,<base64 HMAC-SHA256(key, id + "." + timestamp + "." + body)>`, key being the base64-decoded part of the ' +
      "endpoint's secret after `whsec_`; several, space-separated, while a rotated secret's predecessor still signs (24 h).",
    schema: { type: "string", pattern: "^v1,[A-Za-z0-9+/]+={0,2}( v1,[A-Za-z0-9+/]+={0,2})*$" },
  },
];

const RETRY_LATER = {
  description:
    "Retried on the schedule, or after `Retry-After` when that is longer (at most 2 h more than the schedule).",
  headers: {
    "Retry-After": { description: "Seconds (or an HTTP date) to wait.", schema: { type: "string" } },
  },
};

/** How the platform reads the receiver's answer (docs/webhooks.md). */
const RESPONSES = {
  "2XX": { description: "Delivered, if answered within 10 s. Redirects are not followed." },
  "410": { description: "Gone: the endpoint is disabled and this delivery turns `dead_letter`." },
  "429": RETRY_LATER,
  "503": RETRY_LATER,
  default: {
    description:
      "Any other answer, or none within 10 s, fails the attempt: it is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (each ±20 %), then turns `dead_letter`.",
  },
};

const DELIVERY =
  "Delivered at least once (receivers deduplicate on `webhook-id`), signed as the Standard Webhooks scheme says; in no guaranteed order (several webhooks replicas share the events): order by the body's `timestamp`.";

/** `subject.imported` → `subjectImportedEvent`. */
function operationId(type: string): string {
  const words = type.split(/[._]/);
  return `${words.map((word, i) => (i === 0 ? word : word[0]?.toUpperCase() + word.slice(1))).join("")}Event`;
}

/**
 * The document's `webhooks` (OpenAPI 3.1): one operation per event type, the POST the platform
 * makes to a subscribed endpoint, its body the event's named schema under components, with the
 * catalog's sample body as its example.
 */
export function eventWebhooks(): Record<string, object> {
  return Object.fromEntries(
    (Object.entries(EVENT_CATALOG) as [EventType, (typeof EVENT_CATALOG)[EventType]][]).map(
      ([type, entry]) => [
        type,
        {
          post: {
            operationId: operationId(type),
            summary: entry.summary,
            description: `${entry.description} ${DELIVERY}`,
            tags: ["webhooks"],
            security: [],
            parameters: SIGNATURE_HEADERS,
            requestBody: {
              required: true,
              content: {
                "application/json": {
                  schema: { $ref: `#/components/schemas/${entry.schema.$id}` },
                  example: entry.sample,
                },
              },
            },
            responses: RESPONSES,
          },
        },
      ],
    ),
  );
}

/** Registers every event body as a named schema, so the document shows each under components. */
export function registerEventSchemas(app: FastifyInstance): void {
  for (const entry of Object.values(EVENT_CATALOG)) app.addSchema(entry.schema);
}

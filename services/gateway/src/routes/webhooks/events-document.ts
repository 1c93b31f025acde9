import { EVENT_CATALOG } from "../../events/catalog.js";

// The event stream (`GET ENV/events/stream`) as the AsyncAPI document describes it: a channel on
// the HTTP API's server whose messages are the events' webhook bodies (the OpenAPI document's
// schemas of its webhooks) and the error that ends a stream.

/** The stream's address, its parameters as the OpenAPI document names them. */
export const EVENT_STREAM_ADDRESS =
  "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/events/stream";

/** The name of each event's body schema (a component of both documents), in the catalog's order. */
export const EVENT_SCHEMA_NAMES = Object.values(EVENT_CATALOG).map((entry) => entry.schema.$id as string);

/** The message of the `error` event that ends a stream: the contract's error body. */
export const STREAM_ERROR = "EventStreamError";

/** The channel of the event stream, its messages referred to under `#/components/messages`. */
export function eventStreamChannel(server: string) {
  const message = (name: string) => ({ $ref: `#/components/messages/${name}` });
  return {
    address: EVENT_STREAM_ADDRESS,
    title: "An environment's events",
    description:
      "Server-Sent Events (`text/event-stream`) of the environment's events as they are published: each " +
      "message's `event` is the event's type, its `id` the event's id and its `data` the body a webhook " +
      "endpoint receives, byte for byte. A comment line (`: heartbeat`) comes every 15 seconds without an " +
      "event; a message `event: error` (the contract's error body) ends the stream, e.g. when its credential " +
      "is revoked. A reconnecting client hears the events published from then on. Opened with `GET` and a " +
      "credential holding `webhooks:read`; at most EVENT_STREAMS_PER_CREDENTIAL streams per credential and " +
      "EVENT_STREAMS_PER_ADDRESS per client address, across every gateway (one more is 429 `rate_limited`). " +
      "`evalp listen` reads it.",
    servers: [{ $ref: `#/servers/${server}` }],
    parameters: {
      organization_id: { description: "The organization's id." },
      app_id: { description: "The app's id." },
      environment_id: { description: "The environment's id." },
    },
    messages: Object.fromEntries([...EVENT_SCHEMA_NAMES, STREAM_ERROR].map((name) => [name, message(name)])),
  };
}

/** The messages of the stream: each event's body, and the closing error. */
export function eventStreamMessages(schemas: Record<string, unknown>) {
  const described = (name: string) => schemas[name] as { title?: string; description?: string } | undefined;
  return {
    ...Object.fromEntries(
      EVENT_SCHEMA_NAMES.map((name) => [
        name,
        {
          name,
          title: described(name)?.title ?? name,
          summary: described(name)?.description ?? "",
          contentType: "application/json",
          payload: { $ref: `#/components/schemas/${name}` },
        },
      ]),
    ),
    [STREAM_ERROR]: {
      name: STREAM_ERROR,
      title: STREAM_ERROR,
      summary: "Why the stream ends (`event: error`): the contract's error body (docs/errors.md).",
      contentType: "application/json",
      payload: { $ref: "#/components/schemas/ApplicationError" },
    },
  };
}

/** The operation of the stream: the platform sends, the client holds an operator credential. */
export function eventStreamOperation(channel: string) {
  return {
    action: "send",
    channel: { $ref: `#/channels/${channel}` },
    summary: "The platform sends each event of the environment as it is published.",
    security: [
      { $ref: "#/components/securitySchemes/apiKey" },
      { $ref: "#/components/securitySchemes/bearer" },
    ],
    messages: [...EVENT_SCHEMA_NAMES, STREAM_ERROR].map((name) => ({
      $ref: `#/channels/${channel}/messages/${name}`,
    })),
  };
}

/** The credentials the stream takes, as the HTTP API's operator routes do. */
export const EVENT_STREAM_SECURITY = {
  apiKey: {
    type: "httpApiKey",
    name: "X-API-Key",
    in: "header",
    description: "An environment API key (`evk_…`) holding `webhooks:read`.",
  },
  bearer: {
    type: "http",
    scheme: "bearer",
    description: "A user's access token (`Authorization: Bearer`), whose role grants `webhooks:read`.",
  },
};

import { ERROR_CATALOG } from "@evalp/kit";
import type { TSchema } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import {
  EVENT_SCHEMA_NAMES,
  EVENT_STREAM_SECURITY,
  eventStreamChannel,
  eventStreamMessages,
  eventStreamOperation,
} from "../webhooks/events-document.js";
import { COMMAND_SCHEMAS } from "./commands.js";
import { UtteranceFrame } from "./realtime.js";
import { AgentAck, Interview, TranscriptEntry } from "./wire-schemas.js";

// The realtime doors as an AsyncAPI 3 document (`/asyncapi.json`): both sockets, every frame each
// way, and the credential each door takes. The frames' schemas are the ones that validate them
// (the agent's commands, the participant's utterance) and the OpenAPI document's components for
// what the platform sends (an interview, a transcript entry), so neither can drift from behaviour.

type JsonObject = Record<string, unknown>;
/** What the builder needs of the OpenAPI document: its named schemas. */
export type OpenApiComponents = {
  info: { version: string };
  components?: { schemas?: Record<string, unknown> };
};

const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const named = (schema: TSchema) => schema.$id as string;
/** A TypeBox schema as plain JSON Schema (its symbol-keyed metadata dropped). */
const plain = (schema: TSchema): JsonObject => JSON.parse(JSON.stringify(schema)) as JsonObject;

const ERROR_FRAME = {
  title: "ErrorFrame",
  description:
    "A frame refused (it is no JSON, fails validation — `context.detail` lists the problems, located at " +
    "`frame` — or the interview plane refused it), or the socket ending. `id` is the refused command's, " +
    "when it had one. The socket stays open unless a close follows.",
  type: "object",
  required: ["type", "code", "message", "context"],
  additionalProperties: false,
  properties: {
    type: { type: "string", const: "error" },
    id: { type: "string" },
    code: { type: "string", enum: Object.keys(ERROR_CATALOG) },
    message: { type: "string" },
    context: { type: "object" },
  },
};

/** A pushed frame of type `type` that carries one named resource, `schema`, under `key`. */
function carrying(title: string, description: string, type: string, key: string, schema: TSchema) {
  return {
    title,
    description,
    type: "object",
    required: ["type", key],
    additionalProperties: false,
    properties: { type: { type: "string", const: type }, [key]: schemaRef(named(schema)) },
  };
}

const ENTRY_FRAME = carrying(
  "EntryFrame",
  "A transcript entry: the answer to the participant's utterance, or the agent's turn.",
  "entry",
  "entry",
  TranscriptEntry,
);

const STATE_FRAME = carrying(
  "StateFrame",
  "The interview, pushed to both doors each time its revision changes.",
  "state",
  "interview",
  Interview,
);

/** A command's type as a component name: `consistency_follow_up` → `ConsistencyFollowUpCommand`. */
const commandName = (type: string) =>
  `${type.replace(/(^|_)([a-z])/g, (_match, _sep, letter: string) => letter.toUpperCase())}Command`;

/** The names of the schemas `value` refers to, at any depth. */
function refsIn(value: unknown, found: Set<string> = new Set()): Set<string> {
  if (Array.isArray(value)) for (const item of value) refsIn(item, found);
  else if (value && typeof value === "object") {
    for (const [key, inner] of Object.entries(value)) {
      if (key === "$ref" && typeof inner === "string") found.add(inner.replace("#/components/schemas/", ""));
      else refsIn(inner, found);
    }
  }
  return found;
}

/**
 * `schemas` with the OpenAPI components named in `components`, and every one they or those refer
 * to (at any depth), added.
 */
function withReferenced(
  schemas: Record<string, unknown>,
  components: string[],
  openapi: OpenApiComponents,
): Record<string, unknown> {
  const all = { ...schemas };
  const available = openapi.components?.schemas ?? {};
  const pending = [...refsIn(all), ...components];
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    if (name in all) continue;
    const schema = available[name];
    if (!schema) throw new Error(`the realtime frames refer to ${name}, which the API document lacks`);
    all[name] = schema;
    pending.push(...refsIn(schema));
  }
  return all;
}

/** A message of a component schema: its name, title and description are the schema's. */
function message(name: string, schema: JsonObject) {
  return {
    name,
    title: schema.title,
    summary: schema.description,
    contentType: "application/json",
    payload: schemaRef(name),
  };
}

/** `#/channels/<channel>/messages/<name>` for each name: an operation's messages. */
const channelMessages = (channel: string, names: string[]) =>
  names.map((name) => ({ $ref: `#/channels/${channel}/messages/${name}` }));

/** The credential each door is opened with. */
const TOKEN = { participant: "connectionToken", agent: "agentToken" } as const;

/**
 * An operation on a door's channel: what it sends or receives, and the messages of its reply
 * when it has one (`[messages, reply]`).
 */
function operation(
  action: "send" | "receive",
  channel: keyof typeof TOKEN,
  summary: string,
  [messages, reply]: [string[], string[]?],
) {
  // A new object each time: a serializer may write a shared one as an anchor and its alias.
  const at = () => ({ $ref: `#/channels/${channel}` });
  return {
    action,
    channel: at(),
    summary,
    security: [{ $ref: `#/components/securitySchemes/${TOKEN[channel]}` }],
    messages: channelMessages(channel, messages),
    ...(reply ? { reply: { channel: at(), messages: channelMessages(channel, reply) } } : {}),
  };
}

/**
 * The AsyncAPI 3.1 document of the realtime doors at `realtimeUrl` (the participant door's URL the
 * platform hands out; the agent's is beside it), built from the OpenAPI document `openapi`.
 */
export function realtimeDocument(openapi: OpenApiComponents, realtimeUrl: string): JsonObject {
  const door = new URL(realtimeUrl);
  const base = door.pathname.replace(/\/v1\/participant\/realtime\/?$/, "") || "/";
  const commands = [...COMMAND_SCHEMAS].map(([type, schema]) => {
    const json = plain(schema);
    return {
      name: commandName(type),
      schema: { title: commandName(type), description: `The \`${type}\` command.`, ...json },
    };
  });
  const frames: Record<string, JsonObject> = {
    UtteranceFrame: {
      title: "UtteranceFrame",
      description: "What the participant said or typed: recorded and answered with an entry frame.",
      ...plain(UtteranceFrame),
    },
    EntryFrame: ENTRY_FRAME,
    StateFrame: STATE_FRAME,
    ErrorFrame: ERROR_FRAME,
    ...Object.fromEntries(commands.map(({ name, schema }) => [name, schema])),
  };
  const schemas = withReferenced(
    frames,
    [named(AgentAck), ...EVENT_SCHEMA_NAMES, "ApplicationError"],
    openapi,
  );
  const messages: Record<string, JsonObject> = {
    ...Object.fromEntries(Object.entries(frames).map(([name, schema]) => [name, message(name, schema)])),
    AgentAck: message(named(AgentAck), schemas[named(AgentAck)] as JsonObject),
    ...eventStreamMessages(schemas),
  };
  const messageRefs = (names: string[]) =>
    Object.fromEntries(names.map((name) => [name, { $ref: `#/components/messages/${name}` }]));
  const commandNames = commands.map(({ name }) => name);
  const upgrade = (credential: string) => ({
    ws: {
      method: "GET",
      headers: {
        type: "object",
        properties: {
          Authorization: { type: "string", description: `\`Bearer <${credential}>\` (servers and agents).` },
          "Sec-WebSocket-Protocol": {
            type: "string",
            description: `For browsers, which cannot set headers: \`bearer.<${credential}>\` among the offered subprotocols (the server picks another one offered, when there is one).`,
          },
        },
      },
      bindingVersion: "0.1.0",
    },
  });
  const closes =
    "The server closes the socket with 4401 when its token expires (after an error frame `token_expired`), " +
    "1008 when the client sends more than 100 frames a second, a frame over 64 KiB, or more than 32 frames " +
    "not yet answered, and 1009 for a frame over 1 MiB.";
  return {
    asyncapi: "3.1.0",
    info: {
      title: "evalp realtime doors",
      version: openapi.info.version,
      description:
        "The two WebSockets of an interview: the participant's (opened with the connection token that " +
        "starting the interview hands out) and the agent's (opened with an agent session's token). Every " +
        "frame is one JSON object with a `type`. Beside them, an environment's events as Server-Sent Events. " +
        "The HTTP API is described at `/openapi.json`.",
    },
    defaultContentType: "application/json",
    servers: {
      gateway: {
        host: door.host,
        protocol: door.protocol === "wss:" ? "wss" : "ws",
        pathname: base,
        description: "The gateway: the same host as the HTTP API.",
      },
      api: {
        host: door.host,
        protocol: door.protocol === "wss:" ? "https" : "http",
        pathname: base,
        description: "The gateway's HTTP API, where the event stream is opened.",
      },
    },
    channels: {
      participant: {
        address: "/v1/participant/realtime",
        title: "The participant's door",
        description:
          "Opened with the connection token of `POST /v1/participant/interview/start` (its `server_url`). " +
          "A participant session holds at most REALTIME_SOCKETS_PER_SESSION sockets and a client address at " +
          "most REALTIME_SOCKETS_PER_ADDRESS, across every gateway: one more is refused before the upgrade " +
          "with 429 `rate_limited`. When the participant session is revoked or superseded by a newer one, " +
          "the socket closes with 4401 after an error frame `unauthenticated` or `session_superseded`. " +
          `Frames are handled one at a time, in order. ${closes}`,
        servers: [{ $ref: "#/servers/gateway" }],
        messages: messageRefs(["UtteranceFrame", "EntryFrame", "StateFrame", "ErrorFrame"]),
        bindings: upgrade("connection token"),
      },
      agent: {
        address: "/v1/agent/realtime",
        title: "The agent's door",
        description:
          "Opened with the token of `POST …/evaluations/{evaluation_id}/agent-sessions` (its `server_url`). " +
          "Each command is answered with an ack or an error frame carrying its `id`; a command's `id` makes " +
          "it idempotent (the same id again answers the first ack). While the socket is open the agent owns " +
          "the voice; a newer agent session closes it with an error frame `session_superseded` and 4401. " +
          closes,
        servers: [{ $ref: "#/servers/gateway" }],
        messages: messageRefs([...commandNames, "AgentAck", "StateFrame", "ErrorFrame"]),
        bindings: upgrade("agent token"),
      },
      events: eventStreamChannel("api"),
    },
    operations: {
      receiveUtterance: operation("receive", "participant", "The participant sends an utterance.", [
        ["UtteranceFrame"],
        ["EntryFrame", "ErrorFrame"],
      ]),
      sendParticipantFrames: operation(
        "send",
        "participant",
        "The platform pushes the agent's turns and each new revision of the interview.",
        [["EntryFrame", "StateFrame", "ErrorFrame"]],
      ),
      receiveCommand: operation(
        "receive",
        "agent",
        "The agent sends a command (the same as `POST /v1/agent/interview/commands`).",
        [commandNames, ["AgentAck", "ErrorFrame"]],
      ),
      sendAgentFrames: operation(
        "send",
        "agent",
        "The platform pushes each new revision of the interview, and ends a superseded session.",
        [["StateFrame", "ErrorFrame"]],
      ),
      sendEnvironmentEvents: eventStreamOperation("events"),
    },
    components: {
      schemas,
      messages,
      securitySchemes: {
        connectionToken: {
          type: "http",
          scheme: "bearer",
          description: "The connection token of a started interview (at most 15 minutes).",
        },
        agentToken: {
          type: "http",
          scheme: "bearer",
          description: "An agent session's token: bound to one interview, refused once superseded.",
        },
        ...EVENT_STREAM_SECURITY,
      },
    },
  };
}

/**
 * Serves `/asyncapi.json`: the realtime doors' frames as AsyncAPI 3, built once on the first
 * request, when the OpenAPI document it takes its schemas from is complete and the doors' address
 * (`config.REALTIME_URL`, which a test sets once its server listens) is known.
 */
export function registerRealtimeDocument(app: FastifyInstance, config: { REALTIME_URL: string }): void {
  let realtime: JsonObject | undefined;
  app.get("/asyncapi.json", { schema: { hide: true } }, async () => {
    realtime ??= realtimeDocument(app.swagger() as OpenApiComponents, config.REALTIME_URL);
    return realtime;
  });
}

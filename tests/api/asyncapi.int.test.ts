import { Parser } from "@asyncapi/parser";
import { beforeAll, describe, expect, it } from "vitest";
import { agentInterview } from "./support/agent.js";
import { createTenant } from "./support/fixtures.js";
import { type InterviewSetup, interviewSetup, openSocket } from "./support/interview.js";
import { compileFrameCatalog, type FrameCatalog } from "./support/realtime-catalog.js";
import { useStack } from "./support/stack.js";

// The realtime doors as clients read them: `/asyncapi.json` is a valid AsyncAPI 3 document, and
// what the doors send matches it (every frame any API test receives is checked the same way, by
// the project's setup; here a frame that does not match is shown to be caught).
const context = useStack();
let document: any;
let catalog: FrameCatalog;
let setup: InterviewSetup;

beforeAll(async () => {
  const served = await context.api.get("/asyncapi.json");
  expect(served.status).toBe(200);
  document = served.body;
  catalog = compileFrameCatalog(document);
  setup = await interviewSetup(context.api, await createTenant(context.api));
});

const PARTICIPANT = "/v1/participant/realtime";
const AGENT = "/v1/agent/realtime";
const EVENT_STREAM =
  "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/events/stream";

describe("GET /asyncapi.json", () => {
  it("is a valid AsyncAPI 3 document: no error, warning or hint from @asyncapi/parser", async () => {
    expect(document.asyncapi).toBe("3.1.0");
    const diagnostics = await new Parser().validate(JSON.stringify(document));
    const problems = diagnostics.map(
      (diagnostic) =>
        `${diagnostic.severity} ${diagnostic.code}: ${diagnostic.message} at ${diagnostic.path.join(".")}`,
    );
    expect(problems).toEqual([]);
  });

  it("describes both doors, each with the token it takes, and every agent command", () => {
    const addresses = Object.values(document.channels).map((channel: any) => channel.address);
    expect(addresses.sort()).toEqual([AGENT, EVENT_STREAM, PARTICIPANT].sort());
    const schemes = (operation: string) =>
      document.operations[operation].security.map((scheme: { $ref: string }) => scheme.$ref.split("/").pop());
    expect(schemes("receiveUtterance")).toEqual(["connectionToken"]);
    expect(schemes("receiveCommand")).toEqual(["agentToken"]);
    const commandTypes = document.operations.receiveCommand.messages.map((ref: { $ref: string }) => {
      const name = ref.$ref.split("/").pop() as string;
      return document.components.schemas[name].properties.type.const;
    });
    expect(commandTypes.sort()).toEqual(
      [
        "clarify",
        "consistency_follow_up",
        "pause",
        "propose",
        "report",
        "resolve",
        "resume",
        "scenario_evidence",
        "scenario_follow_up",
        "scenario_gap",
        "utterance",
      ].sort(),
    );
    // The server is where the platform hands out its doors.
    expect(document.servers.gateway).toMatchObject({ host: new URL(context.stack.url).host, protocol: "ws" });
  });

  it("describes the event stream on the HTTP API's server: every webhook's body, and its closing error", async () => {
    const openapi = (await context.api.get("/openapi.json")).body;
    expect(document.servers.api).toMatchObject({ host: new URL(context.stack.url).host, protocol: "http" });
    const events = Object.values(document.channels).find(
      (channel: any) => channel.address === EVENT_STREAM,
    ) as any;
    expect(events.servers).toEqual([{ $ref: "#/servers/api" }]);
    const schemes = document.operations.sendEnvironmentEvents.security.map((scheme: { $ref: string }) =>
      scheme.$ref.split("/").pop(),
    );
    expect(schemes.sort()).toEqual(["apiKey", "bearer"]);
    // Each webhook's example body is a message the stream may send; a frame of the realtime doors is not.
    for (const [type, webhook] of Object.entries<any>(openapi.webhooks)) {
      const example = webhook.post.requestBody.content["application/json"].example;
      expect(catalog.problems(EVENT_STREAM, example), type).toEqual([]);
    }
    expect(Object.keys(events.messages)).toHaveLength(Object.keys(openapi.webhooks).length + 1);
    expect(catalog.problems(EVENT_STREAM, { type: "entry", entry: {} })).not.toEqual([]);
  });

  it("matches what the participant's door sends, and refuses what it never sends", async () => {
    const { started } = await agentInterview(context.api, setup);
    const socket = await openSocket(started.connection.server_url, started.connection.participant_token);
    const frames: unknown[] = [];
    socket.ws.send(
      JSON.stringify({
        type: "utterance",
        modality: "text",
        text: "Hello",
        started_at: new Date().toISOString(),
      }),
    );
    frames.push(await socket.next());
    socket.ws.send("{not json");
    frames.push(await socket.next());
    await socket.close();
    expect(frames.map((frame: any) => frame.type)).toEqual(["entry", "error"]);
    for (const frame of frames) expect(catalog.problems(PARTICIPANT, frame)).toEqual([]);
    // The check can fail: a frame of a shape the document does not list, or missing a field.
    expect(catalog.problems(PARTICIPANT, { type: "entry" })).not.toEqual([]);
    expect(catalog.problems(PARTICIPANT, { type: "ack", id: "x", interview: {} })).not.toEqual([]);
  });

  it("matches the agent door's ack, state and error frames", async () => {
    const { agentSession } = await agentInterview(context.api, setup);
    const socket = await openSocket(agentSession.server_url, agentSession.agent_token);
    const frames: any[] = [];
    socket.ws.send(
      JSON.stringify({
        type: "utterance",
        id: "u-1",
        speaker: "agent",
        modality: "voice",
        text: "Shall we begin?",
        started_at: new Date().toISOString(),
      }),
    );
    socket.ws.send(JSON.stringify({ type: "pause", id: "p-1" }));
    // The connection's state, the utterance's ack (and the state it pushes), the refusal.
    while (!frames.some((frame) => frame.type === "error")) frames.push(await socket.next());
    await socket.close();
    expect(frames.map((frame) => frame.type)).toEqual(expect.arrayContaining(["state", "ack", "error"]));
    for (const frame of frames) expect(catalog.problems(AGENT, frame)).toEqual([]);
    expect(
      catalog.problems(AGENT, { type: "error", code: "no_such_code", message: "", context: {} }),
    ).not.toEqual([]);
  });
});

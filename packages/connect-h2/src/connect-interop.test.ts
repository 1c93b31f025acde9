import { setTimeout as sleep } from "node:timers/promises";
import { StringValueSchema } from "@bufbuild/protobuf/wkt";
import { type Client, Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createH2Transport } from "./connect-h2-transport.js";
import {
  BIG,
  type EchoServer,
  EchoService,
  failure,
  givenUp,
  serve,
  UnservedService,
  waitFor,
} from "./test-echo.js";

/*
 * The platform's own Connect client (`createH2Transport`) and server (`connectH2Handler`) speak
 * Connect with connect-node's stock ones, both ways, over real sockets: every shape of call
 * (unary, server streaming, bidi streaming), metadata, errors with their details, deadlines and
 * calls given up mid-way. The server also answers connect-node's gRPC client.
 */

const WIRE = { binaryOptions: { recursionLimit: 512 }, jsonOptions: { recursionLimit: 512 } };

function transport(kind: "ours" | "stock", url: string): Transport {
  return kind === "ours"
    ? createH2Transport({
        baseUrl: url,
        defaultTimeoutMs: 5_000,
        interceptors: [],
        idleConnectionMs: 60_000,
        ...WIRE,
      })
    : createConnectTransport({ baseUrl: url, httpVersion: "2", ...WIRE });
}

const pairs = [
  { client: "ours", server: "stock" },
  { client: "stock", server: "ours" },
  { client: "ours", server: "ours" },
] as const;

describe.each(pairs)(
  "a $client client calling a $server server",
  ({ client: clientKind, server: serverKind }) => {
    let server: EchoServer;
    let client: Client<typeof EchoService>;
    beforeAll(async () => {
      server = await serve(serverKind);
      client = createClient(EchoService, transport(clientKind, server.url));
    });
    afterAll(() => server.close());

    it("answers a unary call", async () => {
      expect((await client.say({ value: "hello" })).value).toBe("you said hello");
    });

    it("carries request headers, response headers and trailers", async () => {
      let header: Headers | undefined;
      let trailer: Headers | undefined;
      await client.say(
        { value: "meta" },
        {
          headers: { "x-test": "sent" },
          onHeader: (h) => {
            header = h;
          },
          onTrailer: (t) => {
            trailer = t;
          },
        },
      );
      expect(header?.get("x-echo")).toBe("sent");
      expect(trailer?.get("x-trailer")).toBe("after");
    });

    it("carries a message larger than a frame, and many calls at once on one connection", async () => {
      expect((await client.say({ value: "big" })).value).toBe(BIG);
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) => client.say({ value: String(i) })),
      );
      expect(answers.map((answer) => answer.value)).toEqual(
        Array.from({ length: 50 }, (_, i) => `you said ${i}`),
      );
    });

    it("carries an error's code, message and details", async () => {
      const error = await failure(client.say({ value: "fail" }));
      expect(error.code).toBe(Code.NotFound);
      expect(error.rawMessage).toBe("thing not found.");
      expect(error.findDetails(StringValueSchema)).toMatchObject([{ value: "thing" }]);
    });

    it("ends a call past its deadline on both ends", async () => {
      const id = `${clientKind}-${serverKind}-deadline`;
      const error = await failure(client.say({ value: `wait:${id}` }, { timeoutMs: 200 }));
      expect(error.code).toBe(Code.DeadlineExceeded);
      // The server knew the deadline from the request and gave up too: at its own deadline, or
      // when the caller reset the call at the same moment (connect-node resets it with
      // INTERNAL_ERROR, read as internal; the platform's client with CANCEL).
      await waitFor(() => givenUp.has(id));
      const seen = givenUp.get(id);
      expect(seen?.timeoutMs).toBeGreaterThan(0);
      expect(seen?.timeoutMs).toBeLessThanOrEqual(200);
      expect([Code.DeadlineExceeded, Code.Canceled, Code.Internal]).toContain(
        ConnectError.from(seen?.reason).code,
      );
    });

    it("gives up a call when the caller aborts it, and the server hears of it", async () => {
      const id = `${clientKind}-${serverKind}-abort`;
      const controller = new AbortController();
      const call = client.say({ value: `wait:${id}` }, { signal: controller.signal, timeoutMs: 30_000 });
      // Aborted once the server runs it: mid-call.
      await sleep(100);
      controller.abort();
      const error = await failure(call);
      expect(error.code).toBe(Code.Canceled);
      await waitFor(() => givenUp.has(id));
      expect(ConnectError.from(givenUp.get(id)?.reason).code).toBe(Code.Canceled);
    });

    it("refuses a call the caller had already given up", async () => {
      const controller = new AbortController();
      controller.abort();
      const error = await failure(client.say({ value: "hello" }, { signal: controller.signal }));
      expect(error.code).toBe(Code.Canceled);
    });

    it("streams a server's answers", async () => {
      const values: string[] = [];
      for await (const message of client.count({ value: "5" })) values.push(message.value);
      expect(values).toEqual(["1", "2", "3", "4", "5"]);
    });

    it("streams both ways", async () => {
      async function* said() {
        yield { value: "a" };
        yield { value: "b" };
      }
      const values: string[] = [];
      for await (const message of client.chat(said())) values.push(message.value);
      expect(values).toEqual(["echo a", "echo b"]);
    });
  },
);

describe("the platform's server", () => {
  let server: EchoServer;
  beforeAll(async () => {
    server = await serve("ours");
  });
  afterAll(() => server.close());

  it("answers connect-node's gRPC client: unary, errors with details, server streaming", async () => {
    const client = createClient(EchoService, createGrpcTransport({ baseUrl: server.url, ...WIRE }));
    expect((await client.say({ value: "hello" })).value).toBe("you said hello");
    const error = await failure(client.say({ value: "fail" }));
    expect(error.code).toBe(Code.NotFound);
    expect(error.findDetails(StringValueSchema)).toMatchObject([{ value: "thing" }]);
    const values: string[] = [];
    for await (const message of client.count({ value: "3" })) values.push(message.value);
    expect(values).toEqual(["1", "2", "3"]);
  });

  it("answers a path it does not serve with 404 (unimplemented)", async () => {
    const client = createClient(UnservedService, transport("stock", server.url));
    expect((await failure(client.say({ value: "hello" }))).code).toBe(Code.Unimplemented);
  });
});

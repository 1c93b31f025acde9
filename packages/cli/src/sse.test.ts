import { describe, expect, it } from "vitest";
import { readEvents, type SseMessage } from "./sse.js";

/** A body that arrives in these chunks. */
function body(...chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function all(stream: ReadableStream<Uint8Array>): Promise<SseMessage[]> {
  const messages: SseMessage[] = [];
  for await (const message of readEvents(stream)) messages.push(message);
  return messages;
}

describe("readEvents", () => {
  it("reads messages split anywhere, skipping comments and the retry field", async () => {
    const messages = await all(
      body(
        "retry: 3000\n: open\n\nid: e1\nev",
        'ent: subject.imported\ndata: {"a":1}\n',
        "\n: heartbeat\n\n",
      ),
    );
    expect(messages).toEqual([{ event: "subject.imported", id: "e1", data: '{"a":1}' }]);
  });

  it("joins data lines, takes CRLF and CR line ends, and drops a message without data", async () => {
    const messages = await all(body("event: empty\r\n\r\ndata: one\r", "\ndata:two\r\rdata: x\n\n"));
    expect(messages).toEqual([
      { event: "message", id: undefined, data: "one\ntwo" },
      { event: "message", id: undefined, data: "x" },
    ]);
  });

  it("yields nothing of a message the stream ended in the middle of", async () => {
    expect(await all(body("data: cut"))).toEqual([]);
  });
});

/** One Server-Sent Events message: its `event` (default `message`), `id` and `data` lines joined. */
export type SseMessage = { event: string; id: string | undefined; data: string };

/**
 * The messages of a `text/event-stream` body as they arrive (the WHATWG parsing rules: lines end
 * with CRLF, LF or CR; `:` starts a comment; a blank line ends a message; a message without data
 * is dropped). Comments, the server's heartbeats among them, are not messages.
 */
export async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  let buffer = "";
  let message = blank();
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    for (;;) {
      const end = buffer.search(/\r\n|\r|\n/);
      // A CR at the very end may be the first half of a CRLF still to come.
      if (end < 0 || (end === buffer.length - 1 && buffer[end] === "\r")) break;
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + (buffer.startsWith("\r\n", end) ? 2 : 1));
      if (line === "") {
        if (message.data.length > 0)
          yield { event: message.event, id: message.id, data: message.data.join("\n") };
        message = blank();
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + (line[colon + 1] === " " ? 2 : 1));
      if (field === "event") message.event = value;
      else if (field === "data") message.data.push(value);
      else if (field === "id") message.id = value;
    }
  }
}

function blank(): { event: string; id: string | undefined; data: string[] } {
  return { event: "message", id: undefined, data: [] };
}
